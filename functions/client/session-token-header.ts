import { API_SESSIONS_COLLECTION } from '#shared/auth/api-session.ts';
import type { Caller } from '#shared/auth/resolve-caller.ts';
import { SESSIONS_COLLECTION, sessionSchema } from '#shared/entities/session.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import { isTokenOfSession } from '#shared/pki/session-jwt.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { listChildren, validChildren } from '#shared/store/children.ts';

/**
 * The optional `session-token` header of client `GET /services/{id}/edge-routers`: when sent, it must be the token of
 * a session of the caller's API session (`isTokenOfSession`), else the request is unauthorized.
 * One query: the API session's sessions (its children in GSI2), issued in the same wave as the service.
 */
export async function checkSessionToken(
  deps: Deps,
  caller: Caller,
  token: string | undefined,
  baseUrl: string,
): Promise<void> {
  if (token === undefined || token.trim() === '') return;
  const children = await listChildren(deps, API_SESSIONS_COLLECTION, caller.session.id, SESSIONS_COLLECTION);
  const sent = token.trim();
  if (validChildren(deps, children, sessionSchema).some((session) => isTokenOfSession(session, sent, baseUrl))) return;
  throw new ApiError('UNAUTHORIZED', {
    message: 'The session-token header does not name a session of this API session.',
  });
}
