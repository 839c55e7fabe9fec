import { apiSessionCertificates } from '../entities/api-session-certificate.ts';
import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import { sessions } from '../entities/session.ts';
import { mapBounded } from '../map-bounded.ts';
import type { Deps } from '../ports/deps.ts';
import { itemsInIndexPartition } from '../store/index-queries.ts';
import { documentOf, keys } from '../store/keys.ts';

/**
 * Ending what lives under API sessions that ended: their sessions (Dial/Bind) and ephemeral certificates. `api-session-store.ts` runs this after the transaction
 * that removed the API sessions commits (`afterCommit`), whatever ended them: logout, admin delete, expiry met by use
 * or by the list, the identity disabled or deleted. Each session's delete is version-checked, so two cleanups of the
 * same API session never count a session down twice.
 */

/** Sessions one cleanup transaction removes (each is its item, its id-order item and a share of the counter). */
const SESSIONS_PER_CLEANUP = 40;
const QUERY_CONCURRENCY = 16;

/** The kit types that live under an API session (their `parentOf` is the API session). */
const API_SESSION_CHILDREN = [sessions, apiSessionCertificates] as unknown as EntityDefinition<BaseDocument>[];

interface StoredSession {
  /** Its type; a session (Dial/Bind) when unsaid. */
  readonly def?: EntityDefinition<BaseDocument>;
  readonly doc: BaseDocument;
  readonly version: number;
}

/** What is listed under an API session (GSI2, eventually consistent: a cleanup of a moment ago may show). */
async function childrenOfApiSession(deps: Deps, apiSessionId: string): Promise<StoredSession[]> {
  const items = await itemsInIndexPartition(deps.store, keys.parentIndex('api-sessions', apiSessionId));
  return items.flatMap((item) => {
    const def = API_SESSION_CHILDREN.find((child) => String(item.GSI2SK).startsWith(`${child.collection}#`));
    const parsed = def?.schema.safeParse(documentOf(item));
    return def && parsed?.success ? [{ def, doc: parsed.data, version: Number(item.version ?? 0) }] : [];
  });
}

/** Removes sessions, a transaction per chunk, and one by one where another request removed some of a chunk first. */
export async function removeStoredSessions(deps: Deps, stored: readonly StoredSession[]): Promise<void> {
  const chunks: StoredSession[][] = [];
  for (let i = 0; i < stored.length; i += SESSIONS_PER_CLEANUP) chunks.push(stored.slice(i, i + SESSIONS_PER_CLEANUP));
  for (const chunk of chunks) {
    try {
      await deps.store.transact(
        chunk.flatMap((session) =>
          deps.store.deleteOps(session.def ?? API_SESSION_CHILDREN[0]!, session.doc, session.version),
        ),
      );
    } catch {
      for (const session of chunk) {
        await deps.store
          .transact(deps.store.deleteOps(session.def ?? API_SESSION_CHILDREN[0]!, session.doc, session.version))
          .catch(() => undefined);
      }
    }
  }
}

/** Removes every session and ephemeral certificate of these API sessions (ended ones). */
export async function endSessionsOfApiSessions(deps: Deps, apiSessionIds: readonly string[]): Promise<void> {
  const found = await mapBounded([...new Set(apiSessionIds)], QUERY_CONCURRENCY, (id) =>
    childrenOfApiSession(deps, id),
  );
  await removeStoredSessions(deps, found.flat());
}
