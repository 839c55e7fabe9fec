import { RecentMap } from '#shared/recent-map.ts';

/**
 * The dynamic costs the smartrouting, weighted and sticky strategies add to a terminator's route cost, as the
 * reference's cost visitor (`xt_common/cost_visitor.go`, circuit cost 2, failure cost 20, success credit 2) keeps them:
 *
 * - a dial that failed at the terminator adds 20 to its failure cost;
 * - a dial that succeeded takes 2 off the failure cost (never below 0) and counts one more circuit;
 * - a circuit removed counts one fewer;
 * - every minute the failure cost is credited back `max(10, 2^⌊since the last failure / 5 min⌋)`: a failed
 *   terminator is tried again within minutes, sooner the longer it has not failed;
 * - the dynamic cost is `2 · circuits + failure cost`, capped at 65535.
 *
 * Held in this endpoint process's memory, as the reference holds them in the controller's (`xt.GlobalCosts`): each
 * endpoint learns from the dials and circuits it handles. The minute's credit is applied when a terminator's cost is
 * next touched, tick by tick, as if a timer had run: no timer to stop, and a test's clock can move it.
 */
export interface TerminatorCosts {
  /** What the terminator's route cost gets on top of its static cost now. */
  dynamicCost(terminatorId: string): number;
  dialFailed(terminatorId: string): void;
  /** The circuit now counts against the terminator, until `circuitRemoved` names it. */
  dialSucceeded(terminatorId: string, circuitId: string): void;
  /** A circuit this endpoint counted ended (unknown ids: nothing counted, nothing to take back). */
  circuitRemoved(circuitId: string): void;
}

export const CIRCUIT_COST = 2;
export const FAILURE_COST = 20;
export const SUCCESS_CREDIT = 2;
/** How often the failure cost is credited back, and the time its credit's exponent counts in. */
export const CREDIT_PERIOD_MS = 60_000;
const CREDIT_EXPONENT_BASIS_MS = 5 * 60_000;
const MIN_CREDIT = 10;
const MAX_DYNAMIC_COST = 0xffff;
const MAX_UINT32 = 0xffff_ffff;
// Bounds on what a long-lived endpoint remembers: terminators beyond are forgotten least recently touched first (their
// cost starts again from nothing), circuits beyond (their removal never reported here) are no longer taken back.
const MAX_TERMINATORS = 10_000;
const MAX_CIRCUITS = 200_000;

interface Costs {
  circuitCount: number;
  failureCost: number;
  lastFailureMs: number;
  /** The instant of the last minute's credit applied (or when the entry was made). */
  creditedAtMs: number;
}

export function createTerminatorCosts(now: () => Date): TerminatorCosts {
  const costs = new RecentMap<string, Costs>(MAX_TERMINATORS);
  const circuits = new RecentMap<string, string>(MAX_CIRCUITS);

  /** The terminator's entry with the minute's credits since it was last touched applied; made when it is new. */
  function costsOf(terminatorId: string): Costs {
    const nowMs = now().getTime();
    const known = costs.get(terminatorId);
    if (!known) {
      const made = { circuitCount: 0, failureCost: 0, lastFailureMs: 0, creditedAtMs: nowMs };
      costs.set(terminatorId, made);
      return made;
    }
    const ticks = Math.floor((nowMs - known.creditedAtMs) / CREDIT_PERIOD_MS);
    for (let tick = 1; tick <= ticks && known.failureCost > 0; tick++) {
      known.failureCost = Math.max(
        0,
        known.failureCost - creditAt(known, known.creditedAtMs + tick * CREDIT_PERIOD_MS),
      );
    }
    if (ticks > 0) known.creditedAtMs += ticks * CREDIT_PERIOD_MS;
    return known;
  }

  return {
    dynamicCost(terminatorId) {
      if (!costs.get(terminatorId)) return 0;
      const { circuitCount, failureCost } = costsOf(terminatorId);
      return Math.min(MAX_DYNAMIC_COST, circuitCount * CIRCUIT_COST + failureCost);
    },
    dialFailed(terminatorId) {
      const entry = costsOf(terminatorId);
      entry.failureCost = Math.min(MAX_UINT32, entry.failureCost + FAILURE_COST);
      entry.lastFailureMs = now().getTime();
      costs.set(terminatorId, entry);
    },
    dialSucceeded(terminatorId, circuitId) {
      const entry = costsOf(terminatorId);
      entry.failureCost = Math.max(0, entry.failureCost - SUCCESS_CREDIT);
      entry.circuitCount = Math.min(Math.floor(MAX_UINT32 / CIRCUIT_COST), entry.circuitCount + 1);
      costs.set(terminatorId, entry);
      circuits.set(circuitId, terminatorId);
    },
    circuitRemoved(circuitId) {
      const terminatorId = circuits.get(circuitId);
      if (terminatorId === undefined) return;
      circuits.delete(circuitId);
      const entry = costs.get(terminatorId);
      if (entry) entry.circuitCount = Math.max(0, entry.circuitCount - 1);
    },
  };
}

/** One minute's credit: at least 10, doubling with every five minutes since the last failure. */
function creditAt(costs: Costs, atMs: number): number {
  const exponent = Math.floor((atMs - costs.lastFailureMs) / CREDIT_EXPONENT_BASIS_MS);
  return Math.max(MIN_CREDIT, Math.min(MAX_UINT32, 2 ** exponent));
}
