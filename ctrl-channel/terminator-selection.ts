import { randomInt } from 'node:crypto';
import { peerDataOf, type Terminator } from '#shared/entities/terminator.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { usableTerminators } from '#shared/store/usable-terminators.ts';

/**
 * A terminator a circuit may end at, with what a router's terminators carry beyond the management API's: the hosting
 * SDK's instance id (a dial may ask for one), the identity hosting it, and its static peer data (its public key,
 * returned to the dialer).
 */
export interface CandidateTerminator {
  readonly terminator: Terminator;
  readonly instanceId: string;
  /** The hosting identity (the route's `hostId` tag); empty for a terminator made over the management API. */
  readonly hostId: string;
  readonly peerData: ReadonlyMap<number, Buffer>;
}

function candidateOf(terminator: Terminator): CandidateTerminator {
  return {
    terminator,
    // The reference's terminator `identity` is the hosting SDK's instance id, not the host.
    instanceId: terminator.identity,
    hostId: terminator.hostId ?? '',
    peerData: peerDataOf(terminator),
  };
}

/** The terminators of a service whose router is online now (`usableTerminators`), best first. */
export async function onlineTerminatorsOf(deps: Deps, serviceId: string): Promise<CandidateTerminator[]> {
  return (await usableTerminators(deps, serviceId)).map(candidateOf);
}

/**
 * The terminator a circuit ends at among candidates given best first (precedence, then cost): one of the best equals
 * at random, so hosts share the load.
 */
export function chooseTerminator(candidates: readonly CandidateTerminator[]): CandidateTerminator | undefined {
  const [best] = candidates;
  if (!best) return undefined;
  const equals = candidates.filter(
    (c) => c.terminator.precedence === best.terminator.precedence && c.terminator.cost === best.terminator.cost,
  );
  return equals[randomInt(equals.length)];
}
