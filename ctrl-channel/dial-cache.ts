import type { CtrlChange } from '#shared/store/ctrl-changes.ts';
import type { CtrlChangePoll } from './ctrl-change-poll.ts';

/**
 * What an endpoint keeps in memory of a dial's reads (mesh design G.1.4, step 8), so a router's CreateCircuitV2Request
 * is not answered from a dozen DynamoDB reads each time. Now: which edge routers an identity may use for a service
 * (edge router policies and service edge router policies, `edgeRoutersFor`), the most reads of a dial. Each entry is
 * keyed by everything it was computed from that the dial reads afresh (the identity's and the service's ids and role
 * attributes: a changed attribute is another key), and dropped by the change log's notices that may change it
 * (`ctrl-change-poll.ts`), within the second or two the log takes:
 *
 * - `reach` (an edge router policy, a router's or an identity's role attributes) and `services` (a service, a service
 *   edge router policy, ...) drop every entry;
 * - `ended` and `removed` drop the named identities' entries (nothing of theirs should outlive them);
 * - sessions added or updated, certificates, the mesh's notices (links, routers' presence and costs) and terminators
 *   change no policy;
 * - any other kind, one this module does not know, drops every entry.
 *
 * A short maximum age is the safety net of a notice lost (an endpoint that polled nothing for a while), and the size
 * is bounded (least recently used first out). Only grants are taken from it: a router not in an entry is looked up
 * afresh (a router new since, or one a policy now lets in, is not refused for the entry's age).
 */

/** How long an entry is used at most, notices or not. */
export const DIAL_CACHE_MAX_AGE_MS = 30_000;
/** How many entries are kept at most (identity and service pairs). */
export const DIAL_CACHE_MAX_ENTRIES = 10_000;

/** The notices that change none of what is kept. */
const HARMLESS = new Set<string>([
  'added',
  'updated',
  'certificates',
  'router-connected',
  'router-disconnected',
  'link',
  'terminators',
  'router-cost',
]);

/** What a policy lookup is keyed by: an id and its role attributes (order aside). */
export interface Keyed {
  readonly id: string;
  readonly attributes: readonly string[];
}

interface Entry {
  readonly identityId: string;
  readonly routers: ReadonlySet<string>;
  readonly storedAt: number;
}

export interface DialCache {
  /**
   * Whether the identity may use the router for the service: from memory when an entry grants it, else from `lookUp`
   * (the policies read afresh), whose answer is kept unless a notice came while it read.
   */
  mayUse(identity: Keyed, service: Keyed, routerId: string, lookUp: () => Promise<readonly string[]>): Promise<boolean>;
  /** Drops what the changes may have made stale (the change poll's listener; exposed for tests). */
  apply(changes: readonly CtrlChange[]): void;
  /** How many entries are kept (tests). */
  readonly size: number;
}

const keyOf = (identity: Keyed, service: Keyed) =>
  JSON.stringify([identity.id, [...identity.attributes].sort(), service.id, [...service.attributes].sort()]);

export function createDialCache(
  changes: Pick<CtrlChangePoll, 'listen'> | undefined,
  now: () => number = Date.now,
  options: { maxAgeMs?: number; maxEntries?: number } = {},
): DialCache {
  const maxAgeMs = options.maxAgeMs ?? DIAL_CACHE_MAX_AGE_MS;
  const maxEntries = options.maxEntries ?? DIAL_CACHE_MAX_ENTRIES;
  /** In order of last use (a Map keeps insertion order: a hit is moved to the end). */
  const entries = new Map<string, Entry>();
  /** Counts every invalidation: a lookup that started before one does not keep what it read. */
  let generation = 0;

  function dropIdentity(identityId: string): void {
    generation++;
    for (const [key, entry] of entries) if (entry.identityId === identityId) entries.delete(key);
  }

  function dropAll(): void {
    generation++;
    entries.clear();
  }

  function apply(changes: readonly CtrlChange[]): void {
    for (const change of changes) {
      if (HARMLESS.has(change.kind)) continue;
      if (change.kind === 'removed') {
        for (const session of change.sessions) dropIdentity(session.identityId);
      } else if (change.kind === 'ended') {
        dropIdentity(change.ended.identityId);
      } else {
        dropAll();
      }
    }
  }

  changes?.listen(async (page) => apply(page));

  return {
    async mayUse(identity, service, routerId, lookUp) {
      const key = keyOf(identity, service);
      const kept = entries.get(key);
      if (kept && now() - kept.storedAt <= maxAgeMs) {
        entries.delete(key);
        entries.set(key, kept);
        if (kept.routers.has(routerId)) return true;
      }
      const started = generation;
      const storedAt = now();
      const routers = new Set(await lookUp());
      if (generation === started) {
        entries.delete(key);
        entries.set(key, { identityId: identity.id, routers, storedAt });
        while (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
      }
      return routers.has(routerId);
    },
    apply,
    get size() {
      return entries.size;
    },
  };
}
