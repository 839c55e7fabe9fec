import { serviceAccessMarkersOf } from '#shared/entities/policies.ts';
import { ok } from '#shared/http/envelope.ts';
import { callerOf, type Operation } from '#shared/http/operation.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { itemKeyOf } from '#shared/store/derived-items.ts';
import { fitsKey, keys } from '#shared/store/keys.ts';

/**
 * What `lastChangeAt` answers before anything ever moved the marker. A fixed instant rather than the time a function
 * instance started: every instance must give the same answer, or SDKs would refresh each time they reached another.
 * (Bootstrap's own writes move the marker, so in practice it is seen only on a table written by something else.)
 */
export const NEVER_CHANGED = new Date(0).toISOString();

type Item = Record<string, unknown>;

/** The keys of the markers that can be stored (an id too long for a key names no marker). */
function markerKeys(markers: readonly string[]) {
  return markers.map((marker) => keys.changeMarker(marker)).filter((key) => fitsKey(key.PK));
}

/**
 * When any of the change markers last moved: those `known` already holds (read with the caller), the rest in one
 * batch, eventually consistent (`clientGrants`: a client never reads its own write there). Markers hold ISO instants,
 * which sort as strings.
 */
export async function lastChangeAt(
  deps: Deps,
  markers: readonly string[],
  known: ReadonlyMap<string, Item | undefined> = new Map(),
): Promise<string> {
  const wanted = markerKeys(markers);
  const unread = wanted.filter((key) => !known.has(itemKeyOf(key)));
  const read = unread.length > 0 ? await deps.store.batchGet(unread, 'changedAt', 'clientGrants') : [];
  let latest = NEVER_CHANGED;
  for (const item of [...wanted.map((key) => known.get(itemKeyOf(key))), ...read]) {
    const changedAt = item?.changedAt;
    if (typeof changedAt === 'string' && changedAt > latest) latest = changedAt;
  }
  return latest;
}

/**
 * `GET /current-api-session/service-updates`: when anything that decides which services the caller sees, or how,
 * last changed (its service policies, the services, configs and posture checks they grant, itself and its overrides,
 * config types). Only the markers of the roles the caller answers to are read, so a change no policy could show it
 * never moves its `lastChangeAt` (`SERVICE_ACCESS_MARKER`).
 *
 * It is an SDK's poll (the C SDK's once a minute per device: most of a fleet's requests), so it costs one read wave
 * and no write: the markers are read in the batch that reads the caller's session and identity (`callerReads`), and
 * the poll refreshes the session's activity only near its expiry (`NEAR_EXPIRY_TOUCH_MS`).
 */
export const listServiceUpdates: Operation = Object.assign(
  async (request: Parameters<Operation>[0], deps: Deps) => {
    const caller = callerOf(request);
    return ok({ lastChangeAt: await lastChangeAt(deps, serviceAccessMarkersOf(caller.identity), caller.alongside) });
  },
  {
    callerReads: {
      alongside: (identity: { readonly id: string; readonly roleAttributes: readonly string[] }) =>
        markerKeys(serviceAccessMarkersOf(identity)),
      touch: 'nearExpiry' as const,
      eventual: true as const,
    },
  },
);
