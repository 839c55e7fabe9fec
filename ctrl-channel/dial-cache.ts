import { createHash } from 'node:crypto';
import type { CtrlChange } from '#shared/store/ctrl-changes.ts';
import type { CtrlChangePoll } from './ctrl-change-poll.ts';
import { AgedEntries } from './kept-reads.ts';

/**
 * What an endpoint keeps in memory of a dial's reads (mesh design G.1.4, step 8), so a router's CreateCircuitV2Request
 * is not answered from a dozen DynamoDB reads each time. Two kinds of entry:
 *
 * - **Session facts**: what checking an SDK's credentials read (`edge-session-check.ts`): the API session, its
 *   identity, the Dial or Bind session and its service, keyed by the pair of tokens the router presented (hashed).
 *   Only a check that passed is kept; a refusal is read afresh each time. The API session's idle expiry is checked
 *   on every use, and its activity refreshed when due, as a read would (`keepLive`).
 * - **Router grants**: which edge routers an identity may use for a service (edge router policies and service edge
 *   router policies, `edgeRoutersFor`), keyed by everything they were computed from that the dial reads afresh (the
 *   identity's and the service's ids and role attributes: a changed attribute is another key). Only grants are taken
 *   from it: a router not in an entry is looked up afresh (a router new since, or one a policy now lets in, is not
 *   refused for the entry's age).
 *
 * Both are dropped by the change log's notices that may change them (`ctrl-change-poll.ts`), within the second or
 * two the log takes ({@link stalenessOf} says which), after a short maximum age at most (the safety net of a notice
 * lost: an endpoint that polled nothing for a while), and least recently used first past a bound. A read that
 * started before a notice came is used for its dial but not kept (a generation count).
 */

/** How long an entry is used at most, notices or not. */
export const DIAL_CACHE_MAX_AGE_MS = 30_000;
/** How many entries of each kind are kept at most. */
export const DIAL_CACHE_MAX_ENTRIES = 10_000;

/** What a policy lookup is keyed by: an id and its role attributes (order aside). */
export interface Keyed {
  readonly id: string;
  readonly attributes: readonly string[];
}

/** What a session check's entry is dropped by: its API session's, its identity's and its session's ids. */
export interface SessionFactsOwners {
  readonly apiSessionId: string;
  readonly identityId: string;
  readonly sessionId: string;
}

/**
 * What a notice makes stale: everything, or the entries of some identities, API sessions or sessions; router grants
 * and session facts apart (an edge router policy changes grants, not facts; an API session's update, the reverse).
 */
export interface Staleness {
  readonly grants: 'all' | { readonly identityIds: readonly string[] };
  readonly facts:
    | 'all'
    | {
        readonly identityIds: readonly string[];
        readonly apiSessionIds: readonly string[];
        readonly sessionIds: readonly string[];
      };
}

const NOTHING: Staleness = {
  grants: { identityIds: [] },
  facts: { identityIds: [], apiSessionIds: [], sessionIds: [] },
};
const EVERYTHING: Staleness = { grants: 'all', facts: 'all' };

/**
 * What a change log notice makes stale (`shared/entities/router-notice.ts` says what each means):
 *
 * - `reach` changes grants: one identity's (its role attributes: its facts too, as they hold the identity), or
 *   anyone's (an edge router policy, a router's role attributes);
 * - `services` (a service, a service edge router policy, a service policy, a config, ...) changes everything;
 * - `ended` (a disable, a lockout, a revocation, a delete) drops the identity's entries;
 * - API sessions `removed` or `updated` (a second factor passed, ...) drop their facts and, removed, their identities'
 *   grants (nothing of theirs should outlive them); `session-removed` drops that session's facts;
 * - sessions added, certificates, the mesh's notices (links, routers' presence) and terminators' and routers' costs
 *   (`terminator-cache.ts`, `router-cost-cache.ts`) change nothing kept;
 * - any other kind, one this module does not know, drops everything.
 */
export function stalenessOf(change: CtrlChange): Staleness {
  switch (change.kind) {
    case 'added':
    case 'certificates':
    case 'router-ended':
    case 'router-connected':
    case 'router-disconnected':
    case 'link':
    case 'terminators':
    case 'router-cost':
      return NOTHING;
    case 'reach':
      return change.identityId === undefined
        ? { ...NOTHING, grants: 'all' }
        : {
            grants: { identityIds: [change.identityId] },
            facts: { identityIds: [change.identityId], apiSessionIds: [], sessionIds: [] },
          };
    case 'ended':
      return {
        grants: { identityIds: [change.ended.identityId] },
        facts: { identityIds: [change.ended.identityId], apiSessionIds: [], sessionIds: [] },
      };
    case 'removed':
    case 'updated':
      return {
        grants: { identityIds: change.kind === 'removed' ? change.sessions.map((s) => s.identityId) : [] },
        facts: { identityIds: [], apiSessionIds: change.sessions.map((session) => session.id), sessionIds: [] },
      };
    case 'session-removed':
      return { ...NOTHING, facts: { identityIds: [], apiSessionIds: [], sessionIds: [change.sessionId] } };
    default:
      return EVERYTHING;
  }
}

export interface DialCache {
  /**
   * A session check's facts: from memory when kept and `keepLive` still finds them live (it may refresh them: the
   * API session's activity), else from `read` (which throws a refusal), kept unless a notice came while it read.
   */
  sessionFacts<F extends SessionFactsOwners>(
    tokens: readonly string[],
    read: () => Promise<F>,
    keepLive: (kept: F) => Promise<F | undefined>,
  ): Promise<F>;
  /**
   * Whether the identity may use the router for the service: from memory when an entry grants it, else from `lookUp`
   * (the policies read afresh), whose answer is kept unless a notice came while it read.
   */
  mayUse(identity: Keyed, service: Keyed, routerId: string, lookUp: () => Promise<readonly string[]>): Promise<boolean>;
  /** Drops what the changes may have made stale (the change poll's listener; exposed for tests). */
  apply(changes: readonly CtrlChange[]): void;
  /** How many entries of each kind are kept (tests). */
  readonly size: { readonly facts: number; readonly grants: number };
}

interface Grant {
  readonly identityId: string;
  readonly routers: ReadonlySet<string>;
}

const grantKeyOf = (identity: Keyed, service: Keyed) =>
  JSON.stringify([identity.id, [...identity.attributes].sort(), service.id, [...service.attributes].sort()]);

/** The tokens a router presented, hashed: the memory holds no bearer token. */
const factsKeyOf = (tokens: readonly string[]) => createHash('sha256').update(tokens.join('\n')).digest('base64url');

export function createDialCache(
  changes: Pick<CtrlChangePoll, 'listen'> | undefined,
  now: () => number = Date.now,
  options: { maxAgeMs?: number; maxEntries?: number } = {},
): DialCache {
  const maxAgeMs = options.maxAgeMs ?? DIAL_CACHE_MAX_AGE_MS;
  const maxEntries = options.maxEntries ?? DIAL_CACHE_MAX_ENTRIES;
  const grants = new AgedEntries<Grant>(now, maxAgeMs, maxEntries);
  const facts = new AgedEntries<SessionFactsOwners>(now, maxAgeMs, maxEntries);
  /** Counts every invalidation: a read that started before one does not keep what it read. */
  let generation = 0;

  function apply(changes: readonly CtrlChange[]): void {
    for (const change of changes) {
      const stale = stalenessOf(change);
      if (stale === NOTHING) continue;
      generation++;
      if (stale.grants === 'all') grants.clear();
      else if (stale.grants.identityIds.length > 0) {
        const ids = new Set(stale.grants.identityIds);
        grants.dropWhere((grant) => ids.has(grant.identityId));
      }
      if (stale.facts === 'all') facts.clear();
      else {
        const identityIds = new Set(stale.facts.identityIds);
        const apiSessionIds = new Set(stale.facts.apiSessionIds);
        const sessionIds = new Set(stale.facts.sessionIds);
        if (identityIds.size + apiSessionIds.size + sessionIds.size > 0) {
          facts.dropWhere(
            (kept) =>
              identityIds.has(kept.identityId) ||
              apiSessionIds.has(kept.apiSessionId) ||
              sessionIds.has(kept.sessionId),
          );
        }
      }
    }
  }

  changes?.listen(async (page) => apply(page));

  return {
    async sessionFacts(tokens, read, keepLive) {
      const key = factsKeyOf(tokens);
      const kept = facts.get(key) as Awaited<ReturnType<typeof read>> | undefined;
      if (kept) {
        const live = await keepLive(kept);
        if (live) {
          if (live !== kept) facts.update(key, live);
          return live;
        }
        facts.delete(key);
      }
      const started = generation;
      const storedAt = now();
      const fresh = await read();
      if (generation === started) facts.set(key, fresh, storedAt);
      return fresh;
    },
    async mayUse(identity, service, routerId, lookUp) {
      const key = grantKeyOf(identity, service);
      if (grants.get(key)?.routers.has(routerId)) return true;
      const started = generation;
      const storedAt = now();
      const routers = new Set(await lookUp());
      if (generation === started) grants.set(key, { identityId: identity.id, routers }, storedAt);
      return routers.has(routerId);
    },
    apply,
    get size() {
      return { facts: facts.size, grants: grants.size };
    },
  };
}
