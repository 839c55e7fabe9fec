import type { Session } from '../entities/session.ts';
import type { Signer } from '../ports/signer.ts';
import { encodedJwtClaims, issuerOf, jwtSigningInput, publicJwk, signJwt } from './enrollment-jwt.ts';

/**
 * How long a session JWT is good for: a year, as the reference writes it. A session lives no longer than its API
 * session; the router learns of its end from the controller (the API session's and the session's removal), not `exp`.
 */
export const SESSION_JWT_LIFETIME_SECONDS = 365 * 24 * 60 * 60;

/** What a session JWT says: one session of an API session (the reference's `common.ServiceAccessClaims`). */
export interface SessionJwtInput {
  /** The session's id: the JWT's `jti`, by which the controller finds the stored session a router names. */
  readonly id: string;
  readonly type: 'Dial' | 'Bind';
  readonly serviceId: string;
  readonly identityId: string;
  readonly apiSessionId: string;
  readonly issuedAt: Date;
  readonly baseUrl: string;
}

/**
 * The claims as a v2 router reads them: `z_t: "s"` (a service access token), `z_st` the session type, `z_asid` the
 * API session the SDK's connection must belong to, `z_leg: true` (a session of a legacy, opaque-token API session:
 * the router then leaves the access check to the controller).
 */
export function sessionClaims(input: SessionJwtInput) {
  const iat = Math.floor(input.issuedAt.getTime() / 1000);
  return {
    iss: issuerOf(input.baseUrl),
    sub: input.serviceId,
    aud: ['openziti'],
    exp: iat + SESSION_JWT_LIFETIME_SECONDS,
    iat,
    jti: input.id,
    z_t: 's',
    z_st: input.type,
    z_asid: input.apiSessionId,
    z_iid: input.identityId,
    z_leg: true,
  };
}

/**
 * A session's token: a JWT signed by the server key (the key of the controller's TLS certificate, which signs the
 * enrollment JWTs too), whose `kid` names the key {@link sessionJwtVerificationKey} publishes. v2 routers accept a
 * Bind only with such a token, and a Dial with it or a service id: an opaque token works with neither.
 */
export function signSessionJwt(signer: Signer, input: SessionJwtInput): Promise<string> {
  return signJwt(signer, sessionClaims(input));
}

/** A compact JWS's signature: its last part (base64url, 86 characters for ES256). */
export function signatureOfJwt(token: string): string {
  return token.slice(token.lastIndexOf('.') + 1);
}

/**
 * What a new session keeps of its token: the signature, the one part that cannot be worked out again (the header and
 * claims follow from the server key and the session), and the issuer when no public base URL is configured (then
 * `iss` is the address the create came in at, which another listener or host name would not give back).
 */
export function storedSessionToken(
  token: string,
  issuer: string | undefined,
): Pick<Session, 'tokenSignature' | 'tokenIssuer'> {
  return { tokenSignature: signatureOfJwt(token), ...(issuer === undefined ? {} : { tokenIssuer: issuer }) };
}

/** What rebuilding a session's token takes besides the session: the server key's `kid`, the base URL asked at. */
export interface SessionTokenKeys {
  readonly kid: string;
  readonly baseUrl: string;
}

export async function sessionTokenKeys(signer: Signer, baseUrl: string): Promise<SessionTokenKeys> {
  return { kid: (await publicJwk(signer)).kid, baseUrl };
}

/**
 * A stored session's token, the very text its create answered: the header and claims rebuilt as {@link
 * signSessionJwt} wrote them (`iat` from the session's `createdAt`, the same second) before its stored signature. A
 * session stored with its whole token (before only the signature was kept) shows it as stored. A new server key
 * (a deliberate rotation) changes the `kid` shown; such a token no longer verifies either way.
 */
export function sessionTokenOf(session: Session, keys: SessionTokenKeys): string {
  if (session.tokenSignature === undefined) return session.token ?? '';
  return `${jwtSigningInput(keys.kid, storedSessionClaims(session, keys.baseUrl))}.${session.tokenSignature}`;
}

/**
 * Whether `sent` is the session's token, told without the server key (which the client functions do not hold): a
 * token stored whole must be sent as stored; else what follows the header (the claims and the signature) must be the
 * session's. The header names only the key and algorithm, and the signature is unique to its token.
 */
export function isTokenOfSession(session: Session, sent: string, baseUrl: string): boolean {
  if (session.tokenSignature === undefined) return session.token !== undefined && session.token === sent;
  const afterHeader = `${encodedJwtClaims(storedSessionClaims(session, baseUrl))}.${session.tokenSignature}`;
  const headerEnd = sent.indexOf('.');
  return headerEnd > 0 && sent.slice(headerEnd + 1) === afterHeader;
}

/** The claims a stored session's token was signed with. */
function storedSessionClaims(session: Session, baseUrl: string) {
  return sessionClaims({
    id: session.id,
    type: session.type,
    serviceId: session.serviceId,
    identityId: session.identityId,
    apiSessionId: session.apiSessionId,
    issuedAt: new Date(session.createdAt),
    baseUrl: session.tokenIssuer ?? baseUrl,
  });
}

/** A public key as the router data model carries it (`PublicKey`: kid, DER, format, usages). */
export interface RouterPublicKey {
  readonly kid: string;
  /** The key's SubjectPublicKeyInfo, DER-encoded: the format `PKIXPublicKey`. */
  readonly der: Uint8Array;
  readonly format: 'PKIXPublicKey';
  readonly usages: readonly ['JWTValidation'];
}

/**
 * The key routers verify session JWTs with, under the `kid` those JWTs name (the key's RFC 7638 thumbprint, as for
 * every JWT the server key signs): what the control channel publishes in the router data model.
 */
export async function sessionJwtVerificationKey(signer: Signer): Promise<RouterPublicKey> {
  const [{ kid }, key] = await Promise.all([publicJwk(signer), signer.publicKey()]);
  return {
    kid,
    der: new Uint8Array(key.export({ format: 'der', type: 'spki' })),
    format: 'PKIXPublicKey',
    usages: ['JWTValidation'],
  };
}
