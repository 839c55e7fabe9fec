import { X509Certificate } from 'node:crypto';
import { namesServerKey, type OidcTokenClaims, verifyOidcToken } from '../oidc/oidc-tokens.ts';
import { fingerprintOf } from '../pki/certificates.ts';
import type { Deps } from '../ports/deps.ts';
import { RecentMap } from '../recent-map.ts';
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
 * Access tokens this instance verified, by their whole text, until their `exp`: an SDK polls every minute with the same
 * token for the 15 to 25 minutes between its refreshes, and a signature checked once need not be checked again (the
 * session, which every request reads, is what a logout or a disable ends). Bounded: some 5,000 devices' tokens an
 * instance, a few MB.
 */
const verifiedAccessTokens = new RecentMap<string, SessionCredential & { readonly access: OidcTokenClaims }>(5_000);

/**
 * The session token of an access token, verified; undefined when it does not verify (expired, another key, not an
 * access token). `namesServerKey` tells ours from anything else first, without jose.
 */
async function credentialOfAccessToken(deps: Deps, token: string): Promise<SessionCredential | undefined> {
  const known = verifiedAccessTokens.get(token);
  if (known && known.access.exp * 1000 > deps.now().getTime()) return known;
  const access = await verifyOidcToken(deps, token, 'a');
  if (!access) return undefined;
  const credential = { sessionToken: await oidcSessionToken(deps, access.z_asid, access.sub), access };
  verifiedAccessTokens.set(token, credential);
  return credential;
}

/** What a request's bearer token turned out to be. */
export type BearerCheck =
  | { readonly kind: 'credential'; readonly credential: SessionCredential }
  /** Not a token the server key signed: no session (an external JWT, say). */
  | { readonly kind: 'not-ours' }
  | { readonly kind: 'refused'; readonly cause?: { readonly message: string } };

/**
 * A request's `Authorization: Bearer` as an API session credential: an access token of ours, verified, and bound to
 * the certificate its login presented (`z_cfs`: the request must come with one of those certificates, as the
 * reference checks).
 */
export async function bearerCredential(
  deps: Deps,
  bearer: string,
  clientCertPem: string | undefined,
): Promise<BearerCheck> {
  if (!(await namesServerKey(deps, bearer))) return { kind: 'not-ours' };
  const credential = await credentialOfAccessToken(deps, bearer);
  if (!credential) return { kind: 'refused' };
  const bound = credential.access?.z_cfs ?? [];
  if (bound.length > 0 && !bound.includes(fingerprintOfPem(clientCertPem) ?? '')) {
    return {
      kind: 'refused',
      cause: { message: 'the access token is bound to the certificate its login presented: send the request with it' },
    };
  }
  return { kind: 'credential', credential };
}

/** The SHA-1 fingerprint (lower-case hex) of a PEM certificate; undefined when there is none or it does not parse. */
function fingerprintOfPem(pem: string | undefined): string | undefined {
  if (!pem) return undefined;
  try {
    return fingerprintOf(new X509Certificate(pem));
  } catch {
    return undefined;
  }
}

/**
 * A credential a router passes on an SDK's behalf (the SDK's hello token): an access token of ours as its session's
 * token, anything else as the legacy token it is; undefined for an access token of ours that does not verify.
 */
export async function credentialOfPresented(deps: Deps, token: string): Promise<SessionCredential | undefined> {
  if (!(await namesServerKey(deps, token))) return { sessionToken: token };
  return credentialOfAccessToken(deps, token);
}
