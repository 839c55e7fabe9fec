import type { ApiSession } from '../auth/api-session.ts';
import type { Identity } from '../entities/identity.ts';
import { mfas } from '../entities/mfa.ts';
import { pendingExtJwtQueries } from '../ext-jwt/secondary-ext-jwt.ts';
import type { Deps } from '../ports/deps.ts';

/** The reference's `MFA` auth query: a TOTP (or recovery) code of 4 to 6 characters, posted to `/authenticate/mfa`. */
export function totpAuthQuery(isTotpEnrolled: boolean) {
  return {
    typeId: 'MFA',
    provider: 'ziti',
    format: 'alphaNumeric',
    httpMethod: 'POST',
    httpUrl: './authenticate/mfa',
    minLength: 4,
    maxLength: 6,
    isTotpEnrolled,
  };
}

/**
 * The OIDC provider's `TOTP` auth query (the reference's, beside the legacy `MFA` one): a numeric code of 6 to 8
 * characters posted to `/oidc/login/totp`, and whether the identity has enrolled yet (a client that reads `false`
 * enrolls through `/oidc/login/totp/enroll` first).
 */
export function oidcTotpAuthQuery(isTotpEnrolled: boolean) {
  return {
    typeId: 'TOTP',
    provider: 'ziti',
    format: 'numeric',
    httpMethod: 'POST',
    httpUrl: './oidc/login/totp',
    minLength: 6,
    maxLength: 8,
    isTotpEnrolled,
  };
}

/** What a partial session still has to answer, for its `authQueries`; empty for a complete session. */
export async function pendingAuthQueries(deps: Deps, session: ApiSession, identity: Identity) {
  if (!session.isMfaRequired || session.isMfaComplete) return [];
  const [mfa, extJwt] = await Promise.all([
    session.totpPending ? deps.store.get(mfas, identity.id) : undefined,
    session.extJwtPending ? pendingExtJwtQueries(deps, identity) : [],
  ]);
  return [...(session.totpPending ? [totpAuthQuery(mfa?.doc.isVerified === true)] : []), ...extJwt];
}
