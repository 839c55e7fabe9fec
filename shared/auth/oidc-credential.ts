import { namesServerKey, type OidcTokenClaims, verifyOidcToken } from '../oidc/oidc-tokens.ts';
import type { Deps } from '../ports/deps.ts';
import { oidcSessionToken } from './api-session-store.ts';

/**
 * What an API session credential stands for, however it came: a legacy `zt-session` token is read as it is; an OIDC
 * access token (a JWT the server key signed, `z_t: a`) is verified and read as its session's derived token
 * (`oidcSessionToken`), so both kinds of session are judged by the one code (`liveSessionOfToken`: idle timeout,
 * disable, lockout, ended sessions, the login's authenticator gone).
 */
export interface SessionCredential {
  /** The token the session is stored under. */
  readonly sessionToken: string;
  /** The access token's claims, for an OIDC credential. */
  readonly access?: OidcTokenClaims;
}

/**
 * The session token of an access token, verified; undefined when it does not verify (expired, another key, not an
 * access token). `namesServerKey` tells ours from anything else first, without jose.
 */
export async function credentialOfAccessToken(deps: Deps, token: string): Promise<SessionCredential | undefined> {
  const access = await verifyOidcToken(deps, token, 'a');
  if (!access) return undefined;
  return { sessionToken: await oidcSessionToken(deps, access.z_asid, access.sub), access };
}

/**
 * A credential a router passes on an SDK's behalf (the SDK's hello token): an access token of ours as its session's
 * token, anything else as the legacy token it is; undefined for an access token of ours that does not verify.
 */
export async function credentialOfPresented(deps: Deps, token: string): Promise<SessionCredential | undefined> {
  if (!(await namesServerKey(deps, token))) return { sessionToken: token };
  return credentialOfAccessToken(deps, token);
}

/**
 * Whether a credential is a JWT whose `exp` has passed, read without verifying it (its signature was verified when
 * its check was made): a check kept in memory must not outlive the access token it was made with. A legacy token is
 * never expired by this.
 */
export function accessTokenExpired(token: string, now: Date): boolean {
  const parts = token.split('.');
  if (parts.length !== 3) return false;
  try {
    const exp = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8'))?.exp;
    return typeof exp === 'number' && exp * 1000 <= now.getTime();
  } catch {
    return false;
  }
}
