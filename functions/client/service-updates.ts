import { serviceAccessMarkersOf } from '#shared/entities/policies.ts';
import { ok } from '#shared/http/envelope.ts';
import { callerOf, type Operation } from '#shared/http/operation.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { fitsKey, keys } from '#shared/store/keys.ts';

/**
 * What `lastChangeAt` answers before anything ever moved the marker. A fixed instant rather than the time a function
 * instance started: every instance must give the same answer, or SDKs would refresh each time they reached another.
 * (Bootstrap's own writes move the marker, so in practice it is seen only on a table written by something else.)
 */
export const NEVER_CHANGED = new Date(0).toISOString();

/**
 * When any of the change markers last moved: all read in one batch (one request). Markers hold ISO instants, which
 * sort as strings.
 */
export async function lastChangeAt(deps: Deps, markers: readonly string[]): Promise<string> {
  const items = await deps.store.batchGet(
    markers.filter((marker) => fitsKey(keys.changeMarker(marker).PK)).map((marker) => keys.changeMarker(marker)),
    'changedAt',
  );
  let latest = NEVER_CHANGED;
  for (const item of items) {
    const changedAt = item.changedAt;
    if (typeof changedAt === 'string' && changedAt > latest) latest = changedAt;
  }
  return latest;
}

/**
 * `GET /current-api-session/service-updates`: when anything that decides which services the caller sees, or how,
 * last changed (its service policies, the services, configs and posture checks they grant, itself and its overrides,
 * config types). Only the markers of the roles the caller answers to are read, so a change no policy could show it
 * never moves its `lastChangeAt` (`SERVICE_ACCESS_MARKER`).
 */
export const listServiceUpdates: Operation = async (request, deps) =>
  ok({ lastChangeAt: await lastChangeAt(deps, serviceAccessMarkersOf(callerOf(request).identity)) });
