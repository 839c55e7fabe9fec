import {
  type RemovedRouterApiSession,
  type RouterApiSession,
  removedSessionsOf,
  routerApiSessionsOfChanged,
} from '#shared/auth/router-api-sessions.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { ApiSessionChangeKind, ApiSessionChangeSubject } from '#shared/store/ctrl-changes.ts';
import { SYNC_CHUNK_SIZE, SYNC_STRATEGY } from './full-state-sends.ts';
import { ContentType, Header, type OutgoingMessage } from './message.ts';
import { encodeBody } from './protobuf-codec.ts';

/**
 * What routers are told of API sessions between full states, before it is known which router is told what: sessions
 * added or updated as routers hold them, or removed by their tokens. Each router is sent only the sessions of the
 * identities it may be asked to check (`messagesFor`).
 */
export type SessionEvent =
  | { readonly kind: 'added' | 'updated'; readonly sessions: readonly RouterApiSession[] }
  | { readonly kind: 'removed'; readonly sessions: readonly RemovedRouterApiSession[] };

/** Sessions as changes of the log name them: their kind and subjects (`shared/store/ctrl-changes.ts`). */
export interface SessionChange {
  readonly kind: ApiSessionChangeKind;
  readonly sessions: readonly ApiSessionChangeSubject[];
}

/**
 * What these changes tell the routers, in their order: the sessions added or updated read again as they are now, all
 * in one batch (a session gone, partial or ended meanwhile is left out), each removal's tokens derived; consecutive
 * changes of one kind make one event.
 */
export async function sessionEventsOf(
  deps: Deps,
  tokenKey: Uint8Array,
  changes: readonly SessionChange[],
): Promise<SessionEvent[]> {
  const upserted = changes.filter((change) => change.kind !== 'removed').flatMap((change) => change.sessions);
  const current = new Map(
    (upserted.length > 0 ? await routerApiSessionsOfChanged(deps, tokenKey, upserted) : []).map((session) => [
      session.id,
      session,
    ]),
  );
  const events: { kind: ApiSessionChangeKind; sessions: (RouterApiSession | RemovedRouterApiSession)[] }[] = [];
  for (const change of changes) {
    let run = events.at(-1);
    if (run?.kind !== change.kind) {
      run = { kind: change.kind, sessions: [] };
      events.push(run);
    }
    if (change.kind === 'removed') run.sessions.push(...removedSessionsOf(tokenKey, change.sessions));
    else run.sessions.push(...change.sessions.flatMap((subject) => current.get(subject.id) ?? []));
  }
  return events.filter((event) => event.sessions.length > 0) as SessionEvent[];
}

/** Whose sessions a router is told of: those it may be asked to check, and (their ends) those it was until lately. */
export interface RouterReach {
  /** The identities its edge router policies let use it. */
  readonly reach: ReadonlySet<string>;
  /**
   * Identities that left its reach lately: the end of a session of theirs it may still hold (one removed after the
   * router was told their sessions, from an index read that no longer showed it) is still told.
   */
  readonly left: ReadonlyMap<string, number>;
}

/**
 * The messages that tell a router an event: only the sessions of the identities it may be asked to check (their ends
 * also of those that left lately), as many sessions to a message as a full sync's chunk; none when it concerns none.
 */
export function messagesFor(router: RouterReach, event: SessionEvent): OutgoingMessage[] {
  const told = (identityId: string) =>
    router.reach.has(identityId) || (event.kind === 'removed' && router.left.has(identityId));
  const sessions = event.sessions.filter((session) => told(session.identityId));
  const messages: OutgoingMessage[] = [];
  for (let start = 0; start < sessions.length; start += SYNC_CHUNK_SIZE) {
    const chunk = sessions.slice(start, start + SYNC_CHUNK_SIZE);
    messages.push(
      event.kind === 'removed'
        ? removedMessage(chunk as RemovedRouterApiSession[])
        : upsertMessage(event.kind, chunk as RouterApiSession[]),
    );
  }
  return messages;
}

function removedMessage(sessions: readonly RemovedRouterApiSession[]): OutgoingMessage {
  return {
    contentType: ContentType.apiSessionRemoved,
    body: encodeBody('edge.ApiSessionRemoved', {
      tokens: sessions.map((session) => session.token),
      ids: sessions.map((session) => session.id),
    }),
  };
}

function upsertMessage(kind: 'added' | 'updated', apiSessions: readonly RouterApiSession[]): OutgoingMessage {
  const headers = new Map([[Header.syncStrategyType, Buffer.from(SYNC_STRATEGY)]]);
  return kind === 'updated'
    ? {
        contentType: ContentType.apiSessionUpdated,
        headers,
        body: encodeBody('edge.ApiSessionUpdated', { apiSessions }),
      }
    : {
        contentType: ContentType.apiSessionAdded,
        headers,
        body: encodeBody('edge.ApiSessionAdded', { isFullState: false, apiSessions }),
      };
}
