import { randomUUID } from 'node:crypto';
import type { JWK } from 'jose';
import type { Signer } from '../ports/signer.ts';

/** The JWS algorithm of every key here: ECDSA P-256 with SHA-256. */
export const JWT_ALGORITHM = 'ES256';

/** The enrollment methods a JWT names in `em` (identities, routers, CA auto-enrollment, the network's own). */
export type EnrollmentJwtMethod = 'ott' | 'ottca' | 'updb' | 'erott' | 'trott' | 'ca' | 'network';

const publicJwks = new WeakMap<Signer, Promise<JWK & { kid: string }>>();

/** The signer's public key as a JWK with its `kid` (the RFC 7638 thumbprint, so it names the key wherever it lives). */
export function publicJwk(signer: Signer): Promise<JWK & { kid: string }> {
  let jwk = publicJwks.get(signer);
  if (!jwk) {
    jwk = signer.publicKey().then(async (key) => {
      const { kty, crv, x, y } = key.export({ format: 'jwk' });
      const bare = { kty: kty!, crv: crv!, x: x!, y: y! };
      // jose loads here, once per key and cold start: requests that sign nothing never load it.
      const { calculateJwkThumbprint } = await import('jose');
      return { ...bare, kid: await calculateJwkThumbprint(bare), alg: JWT_ALGORITHM, use: 'sig' };
    });
    jwk.catch(() => publicJwks.delete(signer));
    publicJwks.set(signer, jwk);
  }
  return jwk;
}

const encoder = new TextEncoder();
const base64url = (data: string | Uint8Array) => Buffer.from(data).toString('base64url');

/**
 * A compact JWS over `claims`, signed through the Signer: jose cannot sign with a key it does not hold, so the signing
 * input is built here and the Signer (one KMS `Sign`) signs it. Verify with jose against the JWKS.
 */
export async function signJwt(signer: Signer, claims: Readonly<Record<string, unknown>>): Promise<string> {
  const { kid } = await publicJwk(signer);
  const input = jwtSigningInput(kid, claims);
  const signature = await signer.sign(encoder.encode(input));
  return `${input}.${base64url(signature)}`;
}

/**
 * What a JWT's signature covers, its header and claims encoded: the same text for the same key and claims, so a
 * stored signature and the claims it was made over give back the very token (`session-jwt.ts`).
 */
export function jwtSigningInput(kid: string, claims: Readonly<Record<string, unknown>>): string {
  const header = base64url(JSON.stringify({ alg: JWT_ALGORITHM, kid, typ: 'JWT' }));
  return `${header}.${encodedJwtClaims(claims)}`;
}

/** A JWT's claims part, as {@link signJwt} writes it. */
export function encodedJwtClaims(claims: Readonly<Record<string, unknown>>): string {
  return base64url(JSON.stringify(claims));
}

/** `iss` of enrollment JWTs: the controller's public origin, no trailing slash (§f.1). */
export function issuerOf(baseUrl: string): string {
  return new URL(baseUrl).origin;
}

export interface EnrollmentJwtInput {
  readonly method: EnrollmentJwtMethod;
  /** The identity or router that enrolls. */
  readonly subject: string;
  /** The enrollment token. */
  readonly token: string;
  readonly expiresAt: string;
  readonly baseUrl: string;
  /**
   * A router's: the control channel addresses (`tls:<host>:<port>`) it saves at enrollment and dials after. The
   * response to the enrollment does not name them; the JWT is where a router learns them.
   */
  readonly ctrls?: readonly string[];
}

/** The claims of an identity or router enrollment JWT, as the reference writes them. */
export function enrollmentClaims(input: EnrollmentJwtInput) {
  return {
    em: input.method,
    sub: input.subject,
    jti: input.token,
    iss: issuerOf(input.baseUrl),
    aud: [''],
    exp: Math.floor(Date.parse(input.expiresAt) / 1000),
    ...(input.ctrls ? { ctrls: input.ctrls } : {}),
  };
}

/** An enrollment's JWT, signed by the enrollment key: one `Sign`. */
export function signEnrollmentJwt(signer: Signer, input: EnrollmentJwtInput): Promise<string> {
  return signJwt(signer, enrollmentClaims(input));
}

/** The network JWT (`GET /network-jwts`): who the network is, no expiry, a random `jti`. */
export function signNetworkJwt(signer: Signer, baseUrl: string): Promise<string> {
  const issuer = `${issuerOf(baseUrl)}/`;
  return signJwt(signer, { em: 'network', iss: issuer, sub: issuer, aud: ['openziti-enroller'], jti: randomUUID() });
}

/**
 * A CA's auto-enrollment JWT (`GET /cas/{id}/jwt`): `em: ca`, `sub = jti =` the CA's id, the network's audience, no
 * expiry (§f.1). It names the CA, not a secret: enrolling needs a certificate the CA issued.
 */
export function signCaJwt(signer: Signer, baseUrl: string, caId: string): Promise<string> {
  const issuer = `${issuerOf(baseUrl)}/`;
  return signJwt(signer, { em: 'ca', iss: issuer, sub: caId, aud: ['openziti-enroller'], jti: caId });
}

/** The addresses besides the one a request came in at (`ControllerConfig`): AWS's mTLS domain and SDK front door. */
export interface ControllerAddresses {
  readonly mtlsBaseUrl: string | undefined;
  readonly sdkBaseUrl: string | undefined;
}

/**
 * The base URL a JWT names as `iss`, where the client enrolls and, after, keeps calling. An enrollment that proves
 * itself with a certificate the client already holds (ottca, CA auto-enrollment) goes straight to the address that
 * asks for client certificates (the mTLS domain on AWS): the plain one never sees the certificate. A one-time-token
 * enrollment goes to the SDKs' front door, which serves the enrollment and then sends the enrolled SDK on to the
 * mTLS address (`sdk-front-door.ts`). Without those addresses (one local listener), the address asked at.
 */
export function issuerBaseUrl(method: EnrollmentJwtMethod, baseUrl: string, addresses: ControllerAddresses): string {
  if ((method === 'ottca' || method === 'ca') && addresses.mtlsBaseUrl) return addresses.mtlsBaseUrl;
  if (method === 'ott' && addresses.mtlsBaseUrl && addresses.sdkBaseUrl) return addresses.sdkBaseUrl;
  return baseUrl;
}

/** An identity enrollment with its JWT, signed once when the enrollment is made and stored with it. */
export async function withEnrollmentJwt<
  E extends { identityId: string; method: 'ott' | 'ottca' | 'updb'; token: string; expiresAt: string },
>(
  signer: Signer,
  baseUrl: string,
  enrollment: E,
  addresses: ControllerAddresses = { mtlsBaseUrl: undefined, sdkBaseUrl: undefined },
): Promise<E & { jwt: string }> {
  const jwt = await signEnrollmentJwt(signer, {
    method: enrollment.method,
    subject: enrollment.identityId,
    token: enrollment.token,
    expiresAt: enrollment.expiresAt,
    baseUrl: issuerBaseUrl(enrollment.method, baseUrl, addresses),
  });
  return { ...enrollment, jwt };
}
