import { type Terminator, terminators } from '../entities/terminator.ts';
import type { Store } from './entity-store.ts';
import { referrerIds } from './index-queries.ts';

/** Required first, failed last: the reference's order of precedences when it picks a terminator. */
const PRECEDENCE_RANK: Readonly<Record<Terminator['precedence'], number>> = { required: 0, default: 1, failed: 2 };

/** Which of a service's terminators a circuit may use: all, or those of one hosting instance (`instanceId@service`). */
export interface TerminatorChoice {
  /** Only the terminators an SDK bound under this instance id (their `identity`). */
  readonly instanceId?: string;
}

/** Every stored terminator of the service, whatever its router's state (a query of its links, a batch read). */
export async function storedTerminatorsOf(store: Store, serviceId: string): Promise<Terminator[]> {
  const ids = await referrerIds(store, { collection: 'services', id: serviceId }, 'terminators');
  return (await store.getMany(terminators, ids)).filter((terminator) => terminator.service === serviceId);
}

/**
 * Of a service's terminators, those a circuit may use now, best first: of the instance chosen, on a router
 * `isOnline` says is connected, ordered by precedence (required, default, failed), then cost, then id (a stable
 * order among equals; the caller may spread load among them). A disconnected router's terminators stay stored, as in
 * the reference, but are never chosen; they come back when it connects again and re-sends them.
 */
export function usableOf(
  ofService: readonly Terminator[],
  choice: TerminatorChoice,
  isOnline: (terminator: Terminator) => boolean,
): Terminator[] {
  return ofService
    .filter(
      (terminator) =>
        (choice.instanceId === undefined || terminator.identity === choice.instanceId) && isOnline(terminator),
    )
    .sort(
      (a, b) =>
        PRECEDENCE_RANK[a.precedence] - PRECEDENCE_RANK[b.precedence] ||
        a.cost - b.cost ||
        (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );
}
