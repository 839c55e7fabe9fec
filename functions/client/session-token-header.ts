import type { Caller } from '#shared/auth/resolve-caller.ts';
import type { Deps } from '#shared/deps.ts';
import { ApiError } from '#shared/http/api-error.ts';

/**
 * The optional `session-token` header of client `GET /services/{id}/edge-routers`: when sent, it must be the token of
 * a valid session of the caller, else the request is unauthorized.
 *
 * No session (Dial/Bind) store exists yet, so no token can be valid: a sent header is refused. When sessions land,
 * this looks the token up in their store (one read, in the same wave as the service).
 */
export async function checkSessionToken(_deps: Deps, _caller: Caller, token: string | undefined): Promise<void> {
  if (token === undefined || token.trim() === '') return;
  throw new ApiError('UNAUTHORIZED', { message: 'The session-token header does not name a valid session.' });
}
