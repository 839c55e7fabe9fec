import type { Deps } from '#shared/ports/deps.ts';
import type { ChannelLog } from './channel-log.ts';
import { createServiceSettings, type ServiceSettingsCache } from './service-settings.ts';
import { createTerminatorCosts, type TerminatorCosts } from './terminator-costs.ts';
import {
  type Candidate,
  costedTerminators,
  keepsCosts,
  type RandomSource,
  type Selection,
  STICKINESS_TOKEN_HEADER,
  type StrategyName,
  selectTerminator,
  strategyNamed,
} from './terminator-strategies.ts';

/**
 * How this endpoint picks a circuit's terminator and learns from what follows: the service's strategy over its
 * candidates costed with what the endpoint learnt (`terminator-costs.ts`), the strategy's events (a route's failure or
 * success at the terminator, a circuit's end), and the services' settings read outside dials (`service-settings.ts`).
 * One per endpoint process, shared by every router's dials and faults.
 */
export interface TerminatorChoice {
  /**
   * The terminator of the service the dial ends at, among its candidates (at least one; the usable terminators the
   * circuit can reach). The dialer's peer data may carry the sticky strategy's token.
   */
  choose<T extends Candidate>(
    // The strategy as a name: a stored service may name one this version does not know.
    service: { readonly id: string; readonly terminatorStrategy: string },
    candidates: readonly T[],
    asked: ReadonlyMap<number, Buffer>,
    log: Pick<ChannelLog, 'warn'>,
    /** The cost of the path from the dialer's router to the candidate's (`circuit-paths.ts`); none by default. */
    pathCostOf?: (terminator: T) => number,
  ): Chosen<T>;
  /** A route to the chosen terminator failed (its router refused or did not answer). */
  dialFailed(chosen: Chosen<Candidate>): void;
  /** The circuit was routed to the chosen terminator: it counts against it until `circuitRemoved`. */
  dialSucceeded(chosen: Chosen<Candidate>, circuitId: string): void;
  /** A circuit ended (a fault, an idle limit, a dial refused after its route). */
  circuitRemoved(circuitId: string): void;
  readonly serviceSettings: ServiceSettingsCache;
  /** What the endpoint learnt of terminators (for tests and diagnostics). */
  readonly costs: TerminatorCosts;
}

/** A chosen terminator, with the strategy that chose it (whose costs its events feed). */
export interface Chosen<T extends Candidate> extends Selection<T> {
  readonly strategy: StrategyName;
}

export function createTerminatorChoice(deps: Pick<Deps, 'store' | 'now'>, random: RandomSource): TerminatorChoice {
  const costs = createTerminatorCosts(deps.now);
  const serviceSettings = createServiceSettings(deps);
  return {
    choose(service, candidates, asked, log, pathCostOf = () => 0) {
      const { strategy, known } = strategyNamed(service.terminatorStrategy);
      if (!known) {
        // Not a name the API lets a service have; one stored by another version falls back to the default.
        log.warn('unknown terminator strategy, using the default', {
          serviceId: service.id,
          terminatorStrategy: service.terminatorStrategy,
          strategy,
        });
      }
      const dynamicCost = keepsCosts(strategy) ? (t: Candidate) => costs.dynamicCost(t.id) : () => 0;
      const sorted = costedTerminators(candidates, (t) => dynamicCost(t) + pathCostOf(t), random);
      const token = asked.get(STICKINESS_TOKEN_HEADER)?.toString();
      return { ...selectTerminator(strategy, sorted, token ? { stickinessToken: token } : {}, random), strategy };
    },
    dialFailed(chosen) {
      if (keepsCosts(chosen.strategy)) costs.dialFailed(chosen.terminator.id);
    },
    dialSucceeded(chosen, circuitId) {
      if (keepsCosts(chosen.strategy)) costs.dialSucceeded(chosen.terminator.id, circuitId);
    },
    circuitRemoved(circuitId) {
      costs.circuitRemoved(circuitId);
    },
    serviceSettings,
    costs,
  };
}
