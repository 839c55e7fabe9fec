import type { Deps } from '../deps.ts';
import { type Session, sessions } from '../entities/session.ts';
import { mapBounded } from '../map-bounded.ts';
import { queryAll } from '../store/index-queries.ts';
import { documentOf, keys } from '../store/keys.ts';

/**
 * Ending the sessions (Dial/Bind) of API sessions that ended. `api-session-store.ts` runs this after the transaction
 * that removed the API sessions commits (`afterCommit`), whatever ended them: logout, admin delete, expiry met by use
 * or by the list, the identity disabled or deleted. Each session's delete is version-checked, so two cleanups of the
 * same API session never count a session down twice.
 */

/** Sessions one cleanup transaction removes (each is its item, its id-order item and a share of the counter). */
const SESSIONS_PER_CLEANUP = 40;
const QUERY_CONCURRENCY = 16;

interface StoredSession {
  readonly doc: Session;
  readonly version: number;
}

/** The sessions listed under an API session (GSI2, eventually consistent: a cleanup of a moment ago may show). */
async function sessionsOfApiSession(deps: Deps, apiSessionId: string): Promise<StoredSession[]> {
  const items = await queryAll(deps.store, {
    IndexName: 'GSI2',
    KeyConditionExpression: 'GSI2PK = :parent AND begins_with(GSI2SK, :prefix)',
    ExpressionAttributeValues: {
      ':parent': keys.parentIndex('api-sessions', apiSessionId),
      ':prefix': `${sessions.collection}#`,
    },
  });
  return items.flatMap((item) => {
    const parsed = sessions.schema.safeParse(documentOf(item));
    return parsed.success ? [{ doc: parsed.data, version: Number(item.version ?? 0) }] : [];
  });
}

/** Removes sessions, a transaction per chunk, and one by one where another request removed some of a chunk first. */
export async function removeStoredSessions(deps: Deps, stored: readonly StoredSession[]): Promise<void> {
  const chunks: StoredSession[][] = [];
  for (let i = 0; i < stored.length; i += SESSIONS_PER_CLEANUP) chunks.push(stored.slice(i, i + SESSIONS_PER_CLEANUP));
  for (const chunk of chunks) {
    try {
      await deps.store.transact(
        chunk.flatMap((session) => deps.store.deleteOps(sessions, session.doc, session.version)),
      );
    } catch {
      for (const session of chunk) {
        await deps.store.transact(deps.store.deleteOps(sessions, session.doc, session.version)).catch(() => undefined);
      }
    }
  }
}

/** Removes every session of these API sessions (ended ones). */
export async function endSessionsOfApiSessions(deps: Deps, apiSessionIds: readonly string[]): Promise<void> {
  const found = await mapBounded([...new Set(apiSessionIds)], QUERY_CONCURRENCY, (id) =>
    sessionsOfApiSession(deps, id),
  );
  await removeStoredSessions(deps, found.flat());
}
