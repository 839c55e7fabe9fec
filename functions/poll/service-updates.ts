import { identityRoleMarker, serviceAccessMarkersOf } from '#shared/entities/policies.ts';
import { ok } from '#shared/http/envelope.ts';
import { callerOf, type Operation } from '#shared/http/operation.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { CHANGED_AT, changeMarkerKey, type MarkerItemKey } from '#shared/store/change-markers.ts';
import { itemKeyOf } from '#shared/store/derived-items.ts';
import type { ItemKey } from '#shared/store/write-op.ts';
import { keepMarkers, keptMarker, lastKeptMarker } from './shared-markers.ts';

/**
 * What `lastChangeAt` answers before anything ever moved the marker. A fixed instant rather than the time a function
 * instance started: every instance must give the same answer, or SDKs would refresh each time they reached another.
 * (Bootstrap's own writes move the marker, so in practice it is seen only on a table written by something else.)
 */
export const NEVER_CHANGED = new Date(0).toISOString();

type Item = Record<string, unknown>;

/**
 * The keys of the items that hold the markers that can be stored (an id too long for a key names no marker): an
 * identity's own is its identity's item, which the poll reads anyway.
 */
function markerKeys(markers: readonly string[]): MarkerItemKey[] {
  return markers.flatMap((marker) => {
    const key = changeMarkerKey(marker);
    return key ? [key] : [];
  });
}

/** The markers' items: those `known` already holds (read with the caller), the rest read now in one batch. */
async function markerItems(
  deps: Deps,
  wanted: readonly MarkerItemKey[],
  known: ReadonlyMap<string, Item | undefined>,
): Promise<Map<string, Item | undefined>> {
  const unread = wanted.filter((key) => !known.has(itemKeyOf(key)));
  const read = unread.length > 0 ? await deps.store.batchGet(unread, `PK, SK, ${CHANGED_AT}`, 'clientGrants') : [];
  const found = new Map(read.map((item) => [itemKeyOf(item as { PK: unknown; SK: unknown }), item]));
  return new Map(wanted.map((key) => [itemKeyOf(key), known.get(itemKeyOf(key)) ?? found.get(itemKeyOf(key))]));
}

/** The latest instant the markers hold (ISO instants sort as strings); `NEVER_CHANGED` when none moved. */
function latestOf(items: Iterable<Item | undefined>): string {
  let latest = NEVER_CHANGED;
  for (const item of items) {
    const changedAt = item?.[CHANGED_AT];
    if (typeof changedAt === 'string' && changedAt > latest) latest = changedAt;
  }
  return latest;
}

/**
 * When any of the change markers last moved: those `known` already holds (read with the caller), the rest in one
 * batch, eventually consistent (`clientGrants`: a client never reads its own write there).
 */
export async function lastChangeAt(
  deps: Deps,
  markers: readonly string[],
  known: ReadonlyMap<string, Item | undefined> = new Map(),
): Promise<string> {
  return latestOf((await markerItems(deps, markerKeys(markers), known)).values());
}

/** The keys of the identity's markers, split into its own (`@id`, read every poll) and those it shares with others. */
function identityMarkerKeys(identity: { readonly id: string; readonly roleAttributes: readonly string[] }) {
  const own = identityRoleMarker(`@${identity.id}`);
  const markers = serviceAccessMarkersOf(identity);
  return { own: markerKeys([own]), shared: markerKeys(markers.filter((marker) => marker !== own)) };
}

/** The identity's marker keys a poll must read at `now`: its own, and the shared ones this instance does not keep. */
function markerKeysToRead(
  identity: { readonly id: string; readonly roleAttributes: readonly string[] },
  now: Date,
): ItemKey[] {
  const { own, shared } = identityMarkerKeys(identity);
  return [...own, ...shared.filter((key) => !keptMarker(key, now))];
}

/**
 * `GET /current-api-session/service-updates`: when anything that decides which services the caller sees, or how,
 * last changed (its service policies, the services, configs and posture checks they grant, itself and its overrides,
 * config types). Only the markers of the roles the caller answers to are read, so a change no policy could show it
 * never moves its `lastChangeAt` (`SERVICE_ACCESS_MARKER`).
 *
 * It is an SDK's poll (the C SDK's once a minute per device: most of a fleet's requests), so it costs one read wave
 * and no write: the caller's own marker (`@id`) is on its identity's item (`change-markers.ts`), read in the batch
 * that reads its session (`callerReads`: the batch reads the item once and hands it back as the marker too), with the
 * markers it shares with other identities (the global one, one per role attribute) unless this instance read them
 * less than `SHARED_MARKER_LIFETIME_MS` ago (`shared-markers.ts`); the poll refreshes the session's activity only near
 * its expiry (`NEAR_EXPIRY_TOUCH_MS`).
 */
export const listServiceUpdates: Operation = Object.assign(
  async (request: Parameters<Operation>[0], deps: Deps) => {
    const { identity, alongside } = callerOf(request);
    const { own, shared } = identityMarkerKeys(identity);
    const known = new Map(alongside);
    // A shared marker the caller's read left out was held when it was read (`markerKeysToRead`): taken whatever its
    // age since, so a lifetime ending during the request costs no second wave. Only the oldest tokens' reads ask
    // nothing alongside (not even the `@id` marker); theirs are taken only while held.
    const askedAlongside = own.every((key) => alongside.has(itemKeyOf(key)));
    for (const key of shared) {
      if (known.has(itemKeyOf(key))) continue;
      const kept = askedAlongside ? lastKeptMarker(key) : keptMarker(key, deps.now());
      if (kept) known.set(itemKeyOf(key), kept.item);
    }
    const items = await markerItems(deps, [...own, ...shared], known);
    // Only what this request read is kept (anew): a kept marker handed on would never be read again.
    const readNow = shared.filter((key) => alongside.has(itemKeyOf(key)) || !known.has(itemKeyOf(key)));
    keepMarkers(
      readNow.map((key) => [key, items.get(itemKeyOf(key))] as const),
      deps.now(),
    );
    return ok({ lastChangeAt: latestOf(items.values()) });
  },
  { callerReads: { alongside: markerKeysToRead, touch: 'nearExpiry' as const, eventual: true as const } },
);
