import type { Deps } from '../deps.ts';
import type { Identity } from '../entities/identity.ts';
import { extJwtCompletesRequest } from '../ext-jwt/secondary-ext-jwt.ts';
import { ApiError } from '../http/api-error.ts';
import type { AuthLevel } from '../routes/route.ts';
import type { ApiSession } from './api-session.ts';
import { identityOfSession, touchApiSession } from './api-session-store.ts';

/** The authenticated caller of a request: its API session, the token it presented, and its identity. */
export interface Caller {
  readonly token: string;
  readonly session: ApiSession;
  readonly identity: Identity;
}

// The reference's WWW-Authenticate challenges, so clients that parse them keep working.
const MISSING_CHALLENGE =
  'zt-session realm="zt-session" error="missing" error_description="no matching token was provided",' +
  'Bearer realm="openziti-oidc" error="missing" error_description="no matching token was provided"';
const INVALID_CHALLENGE = 'zt-session realm="zt-session" error="invalid" error_description="token is invalid"';

function unauthorized(challenge: string | undefined, message?: string): ApiError {
  return new ApiError('UNAUTHORIZED', {
    ...(message ? { message } : {}),
    ...(challenge ? { headers: { 'www-authenticate': challenge } } : {}),
  });
}

/**
 * Resolves the `zt-session` header into the caller and checks it against the route's auth level; every failure is a
 * 401 `UNAUTHORIZED` (the reference never answers 403 for lack of access). A used session's activity is refreshed.
 */
export async function resolveCaller(
  deps: Deps,
  headers: Readonly<Record<string, string | undefined>>,
  level: AuthLevel,
): Promise<Caller | undefined> {
  if (level === 'none') return undefined;
  const token = headers['zt-session']?.trim();
  if (!token) throw unauthorized(MISSING_CHALLENGE);
  const session = await touchApiSession(deps, token);
  if (!session) throw unauthorized(INVALID_CHALLENGE);
  const identity = await identityOfSession(deps, session);
  if (!identity) throw unauthorized(INVALID_CHALLENGE);
  const caller = { token, session, identity };
  if (level === 'partial') return caller;
  // A partial session whose only missing factor is an external JWT is complete for a request that brings one.
  if (session.isMfaRequired && !session.isMfaComplete) {
    const waitsOnlyForExtJwt = session.totpPending === false && session.extJwtPending === true;
    if (!waitsOnlyForExtJwt || !(await extJwtCompletesRequest(deps, headers, identity, deps.logger))) {
      throw unauthorized(undefined, 'The API session must complete its second factor (MFA) first.');
    }
  }
  if (level === 'admin' && !identity.isAdmin) {
    throw unauthorized(undefined, 'This operation requires an administrator.');
  }
  return caller;
}
