import { randomUUID } from 'node:crypto';
import { JWT_ALGORITHM, publicJwk, signJwt } from '../pki/enrollment-jwt.ts';
import type { Deps } from '../ports/deps.ts';
import type { OidcLogin } from '../store/oidc-items.ts';

/**
 * The OIDC provider's tokens (`docs/oidc-design.md`, C): JWTs signed by the server key, the key whose certificate an
 * SDK pinned at enrollment and routers find in their data model (`JWTValidation`, under the same `kid`: the key's
 * RFC 7638 thumbprint, as every JWT the server key signs carries). The claims are the reference's
 * (`common.AccessClaims`, `common.RefreshClaims`, `common.CustomClaims`): routers read `z_t`, `z_asid`, `sub`, `aud`
 * and `exp`; SDKs read `exp` (refresh timers) and the C SDK parses the refresh token as a JWT too.
 */

/** The clients the provider knows, both public (PKCE, no secret): `native` is what the Go SDK still logs in as. */
export const OIDC_CLIENT_IDS = ['openziti', 'native'] as const;
export type OidcClientId = (typeof OIDC_CLIENT_IDS)[number];

export function isOidcClientId(value: unknown): value is OidcClientId {
  return (OIDC_CLIENT_IDS as readonly unknown[]).includes(value);
}

/** `z_t`: an access token, a refresh token (service access tokens, `s`, are `shared/pki/session-jwt.ts`'). */
export type OidcTokenType = 'a' | 'r';

/**
 * Who a token speaks for: the API session its login opened and what the login learned (`OidcLogin`), the client and
 * the scopes; the same in every token of the session.
 */
export interface OidcSessionFacts extends OidcLogin {
  readonly clientId: OidcClientId;
  readonly scopes: readonly string[];
}

/** A verified token's claims, as far as the controller reads them back. */
export interface OidcTokenClaims {
  readonly jti: string;
  readonly iss: string;
  readonly sub: string;
  readonly aud?: string | readonly string[];
  readonly exp: number;
  readonly iat: number;
  readonly nbf?: number;
  /** Absent on an ID token. */
  readonly z_t?: OidcTokenType;
  readonly z_asid: string;
  readonly z_authid: string;
  readonly client_id: string;
  readonly z_cfs?: readonly string[];
  readonly amr?: readonly string[];
  readonly auth_time?: number;
  readonly scopes?: readonly string[];
  readonly z_ct?: readonly string[];
  readonly z_ia?: boolean;
  readonly z_eid?: string;
  readonly z_ra?: string;
}

/** The issuer a request reached: `https://<host:port>/oidc`, as the reference names one per address it serves. */
export function oidcIssuerOf(baseUrl: string): string {
  return `${baseUrl.replace(/\/$/, '')}/oidc`;
}

/** The audiences a token of ours carries and an access token must hold one of. */
const AUDIENCES = ['openziti', 'native'];

function customClaims(facts: OidcSessionFacts) {
  return {
    z_asid: facts.apiSessionId,
    z_aid: facts.clientId,
    z_authid: facts.authenticatorId,
    z_ct: [...facts.configTypes],
    z_cfs: [...facts.certFingerprints],
    z_ia: facts.isAdmin,
    ...(facts.externalId ? { z_eid: facts.externalId } : {}),
    z_ra: facts.remoteAddress,
  };
}

/** A signed token with what its holder is told of it. */
export interface SignedToken {
  readonly token: string;
  readonly jti: string;
  /** Epoch seconds. */
  readonly exp: number;
}

function standardClaims(issuer: string, facts: OidcSessionFacts, now: Date, lifetimeSeconds: number) {
  const iat = Math.floor(now.getTime() / 1000);
  return {
    jti: randomUUID(),
    iss: issuer,
    sub: facts.identityId,
    aud: [facts.clientId === 'native' ? 'native' : 'openziti'],
    azp: facts.clientId,
    exp: iat + lifetimeSeconds,
    iat,
    nbf: iat,
    auth_time: facts.authTime,
    amr: [...facts.amr],
    client_id: facts.clientId,
  };
}

async function signed(deps: Deps, claims: Record<string, unknown> & { jti: string; exp: number }) {
  return { token: await signJwt(deps.signers.server, claims), jti: claims.jti, exp: claims.exp };
}

/** An access token (`z_t: a`): what API calls carry as `Authorization: Bearer` and routers are shown by SDKs. */
export function signAccessToken(deps: Deps, issuer: string, facts: OidcSessionFacts): Promise<SignedToken> {
  const claims = standardClaims(issuer, facts, deps.now(), deps.config.oidc.accessTokenSeconds);
  return signed(deps, { ...claims, scopes: [...facts.scopes], z_t: 'a', ...customClaims(facts) });
}

/** A refresh token (`z_t: r`), a JWT as the reference's: the C SDK reads its `exp` to know when to stop refreshing. */
export function signRefreshToken(deps: Deps, issuer: string, facts: OidcSessionFacts): Promise<SignedToken> {
  const claims = standardClaims(issuer, facts, deps.now(), deps.config.oidc.refreshTokenSeconds);
  return signed(deps, { ...claims, scopes: [...facts.scopes], z_t: 'r', ...customClaims(facts) });
}

/** The ID token of the code flow, with the auth request's `nonce` when it sent one. */
export function signIdToken(
  deps: Deps,
  issuer: string,
  facts: OidcSessionFacts,
  nonce: string | undefined,
): Promise<SignedToken> {
  const claims = standardClaims(issuer, facts, deps.now(), deps.config.oidc.accessTokenSeconds);
  return signed(deps, { ...claims, ...(nonce ? { nonce } : {}), ...customClaims(facts) });
}

/** What a token of ours says of its session, for minting the next ones (refresh, token exchange). */
export function sessionFactsOf(claims: OidcTokenClaims): OidcSessionFacts {
  return {
    apiSessionId: claims.z_asid,
    identityId: claims.sub,
    authenticatorId: claims.z_authid,
    clientId: claims.client_id === 'native' ? 'native' : 'openziti',
    isAdmin: claims.z_ia === true,
    externalId: claims.z_eid ?? null,
    configTypes: claims.z_ct ?? [],
    certFingerprints: claims.z_cfs ?? [],
    amr: claims.amr ?? [],
    authTime: claims.auth_time ?? claims.iat,
    remoteAddress: claims.z_ra ?? '',
    scopes: claims.scopes ?? [],
  };
}

/** The header of a compact JWS, if the text is one. */
function headerOf(token: string): { kid?: unknown; alg?: unknown } | undefined {
  const dot = token.indexOf('.');
  if (dot <= 0 || token.split('.').length !== 3) return undefined;
  try {
    return JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Whether a bearer token names the server key: then it is ours to verify (an access token), and anything else an
 * external JWT. Told from the header alone, no signature checked.
 */
export async function namesServerKey(deps: Deps, token: string): Promise<boolean> {
  const header = headerOf(token);
  if (!header || header.alg !== JWT_ALGORITHM) return false;
  return header.kid === (await publicJwk(deps.signers.server)).kid;
}

/** What a token is verified as: an access or a refresh token (their `z_t`), or an ID token (which carries none). */
export type OidcTokenKind = OidcTokenType | 'id';

/**
 * A token of ours of the given kind, verified: signature by the server key, `exp` and `nbf` (a minute's leeway for
 * clocks), an audience of ours, `z_t`; undefined when any fails. `acceptExpired` takes one whose `exp` has passed (a
 * logout's `id_token_hint`, which the reference takes expired too): its signature and every other claim still count.
 * jose is loaded with the first token verified.
 */
export async function verifyOidcToken(
  deps: Deps,
  token: string,
  kind: OidcTokenKind,
  options: { readonly acceptExpired?: boolean } = {},
): Promise<OidcTokenClaims | undefined> {
  if (!(await namesServerKey(deps, token))) return undefined;
  const { jwtVerify, errors } = await import('jose');
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, await deps.signers.server.publicKey(), {
      algorithms: [JWT_ALGORITHM],
      audience: AUDIENCES,
      clockTolerance: 60,
      currentDate: deps.now(),
    }));
  } catch (error) {
    // Thrown only once the signature has verified and every claim before `exp` has passed.
    if (!(options.acceptExpired && error instanceof errors.JWTExpired)) return undefined;
    payload = error.payload;
  }
  if (payload.z_t !== (kind === 'id' ? undefined : kind)) return undefined;
  const claims = payload as unknown as OidcTokenClaims;
  const named = [claims.jti, claims.sub, claims.z_asid, claims.z_authid, claims.client_id];
  return named.every((value) => typeof value === 'string' && value !== '') ? claims : undefined;
}
