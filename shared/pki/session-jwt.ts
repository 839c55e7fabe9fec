import type { Signer } from '../ports/signer.ts';
import { issuerOf, publicJwk, signJwt } from './enrollment-jwt.ts';

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
