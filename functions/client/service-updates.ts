import type { Deps } from '#shared/deps.ts';
import { SERVICE_ACCESS_MARKER } from '#shared/entities/policies.ts';
import { ok } from '#shared/http/envelope.ts';
import type { Operation } from '#shared/http/operation.ts';
import { COUNTER_SHARDS, keys } from '#shared/store/keys.ts';

/**
 * What `lastChangeAt` answers before anything ever moved the marker. A fixed instant rather than the time a function
 * instance started: every instance must give the same answer, or SDKs would refresh each time they reached another.
 * (Bootstrap's own writes move the marker, so in practice it is seen only on a table written by something else.)
 */
export const NEVER_CHANGED = new Date(0).toISOString();

/**
 * When a change marker last moved: the latest of its shards, all read in one batch (one request). Markers hold ISO
 * instants, which sort as strings.
 */
export async function lastChangeAt(deps: Deps, marker: string): Promise<string> {
  const shards = Array.from({ length: COUNTER_SHARDS }, (_, shard) => keys.changeMarker(marker, shard));
  const items = await deps.store.batchGet(shards, 'changedAt');
  let latest = NEVER_CHANGED;
  for (const item of items) {
    const changedAt = item.changedAt;
    if (typeof changedAt === 'string' && changedAt > latest) latest = changedAt;
  }
  return latest;
}

/**
 * `GET /current-api-session/service-updates`: when anything that decides which services an identity sees, or how,
 * last changed (policies, services, configs, config types, posture checks, identities, edge routers, overrides).
 * One marker for the whole network, so an SDK may refresh when nothing of its own changed, never miss a change of
 * its own.
 */
export const listServiceUpdates: Operation = async (_request, deps) =>
  ok({ lastChangeAt: await lastChangeAt(deps, SERVICE_ACCESS_MARKER) });
