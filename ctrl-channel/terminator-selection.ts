import { randomInt } from 'node:crypto';
import { type Terminator, terminators } from '#shared/entities/terminator.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { referrerIds } from '#shared/store/index-queries.ts';
import { readRouterConnections } from '#shared/store/router-connections.ts';

/**
 * A terminator a circuit may end at, with what a router's terminators carry beyond the management API's: the hosting
 * SDK's instance id (a dial may ask for one) and its static peer data (its public key, returned to the dialer).
 */
export interface CandidateTerminator {
  readonly terminator: Terminator;
  readonly instanceId: string;
  readonly peerData: ReadonlyMap<number, Buffer>;
}

/**
 * What a terminator created from a router may carry (the terminators feature stores them; a terminator made over the
 * management API has neither): its SDK's instance id, and its peer data as base64 values keyed by header id.
 */
type RouterMadeTerminator = Terminator & {
  readonly instanceId?: unknown;
  readonly peerData?: unknown;
};

function candidateOf(terminator: RouterMadeTerminator): CandidateTerminator {
  const peerData = new Map<number, Buffer>();
  if (terminator.peerData && typeof terminator.peerData === 'object') {
    for (const [key, value] of Object.entries(terminator.peerData)) {
      if (/^\d+$/.test(key) && typeof value === 'string') peerData.set(Number(key), Buffer.from(value, 'base64'));
    }
  }
  const instanceId = typeof terminator.instanceId === 'string' ? terminator.instanceId : '';
  return { terminator, instanceId, peerData };
}

/**
 * The terminators of a service whose router is online now (its control channel's lease runs), read from the links
 * the terminators keep in the service's partition.
 */
export async function onlineTerminatorsOf(deps: Deps, serviceId: string): Promise<CandidateTerminator[]> {
  const ids = await referrerIds(deps.store, { collection: 'services', id: serviceId }, terminators.collection);
  const ofService = (await deps.store.getMany(terminators, ids)).filter((t) => t.service === serviceId);
  const [edge, transit] = await Promise.all([
    readRouterConnections(
      deps.store,
      'edge-routers',
      ofService.flatMap((t) => t.edgeRouterId ?? []),
    ),
    readRouterConnections(
      deps.store,
      'routers',
      ofService.flatMap((t) => t.transitRouterId ?? []),
    ),
  ]);
  const now = deps.now().getTime();
  const online = (t: Terminator) => ((edge.get(t.router) ?? transit.get(t.router))?.leaseExpiresAt ?? 0) > now;
  return ofService.filter(online).map(candidateOf);
}

const PRECEDENCE_RANK: Readonly<Record<Terminator['precedence'], number>> = { required: 0, default: 1, failed: 2 };

/**
 * The terminator a circuit ends at among candidates: the best precedence (required, then default, then failed), then
 * the lowest cost, one of the equals at random so hosts share the load.
 */
export function chooseTerminator(candidates: readonly CandidateTerminator[]): CandidateTerminator | undefined {
  const rank = (c: CandidateTerminator) => [PRECEDENCE_RANK[c.terminator.precedence], c.terminator.cost] as const;
  let best: CandidateTerminator[] = [];
  for (const candidate of candidates) {
    const [precedence, cost] = rank(candidate);
    const current = best[0] ? rank(best[0]) : undefined;
    if (!current || precedence < current[0] || (precedence === current[0] && cost < current[1])) best = [candidate];
    else if (precedence === current[0] && cost === current[1]) best.push(candidate);
  }
  return best.length > 0 ? best[randomInt(best.length)] : undefined;
}
