import { X509Certificate } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { type ExternalJwtSigner, externalJwtSigners } from '../entities/external-jwt-signer.ts';
import type { Deps } from '../ports/deps.ts';
import { keySetFor } from './jwks-cache.ts';

/**
 * Tokens larger than this are refused unread: real access and id tokens are a few KiB at most (API Gateway refuses
 * request headers over 10 KiB anyway, the local server over 16 KiB).
 */
export const MAX_EXTERNAL_JWT_BYTES = 8 * 1024;

/** Only asymmetric signatures: a signer publishes public keys, so `none` and HMAC can prove nothing. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** Leeway for the issuer's and our clocks disagreeing about `exp` and `nbf`. */
const CLOCK_SKEW_SECONDS = 30;

/** A token without `exp` would be good forever: a leaked one could never be outlived. */
const REQUIRED_CLAIMS = ['exp'];

/** Why an external JWT was refused; for the log only (the caller always sees 401 `INVALID_AUTH`). */
export class ExternalJwtRefused extends Error {
  override readonly name = 'ExternalJwtRefused';
}

/** A verified token: the signer that vouches for it and its claims. */
export interface VerifiedExternalJwt {
  readonly signer: ExternalJwtSigner;
  readonly payload: JWTPayload;
}

/** jose, loaded by the first request that brings an external JWT: most requests bring none. */
const jose = () => import('jose');

async function decoded(token: string) {
  const { decodeJwt, decodeProtectedHeader } = await jose();
  try {
    return { header: decodeProtectedHeader(token), claims: decodeJwt(token) };
  } catch {
    throw new ExternalJwtRefused('not a JWT');
  }
}

/**
 * Verifies a JWT against the enabled signer its `iss` names: the key is the signer's certificate (the token's `kid`
 * must be the signer's) or the signer's JWKS key with that `kid`; `aud` must hold the signer's audience (a signer
 * without one vouches for nobody), `exp` must be there and, like `nbf`, hold within a small skew. Throws
 * ExternalJwtRefused for anything else. Every external JWT the controller trusts (login, secondary factor, token
 * enrollment) is verified here and only here.
 */
export async function verifyExternalJwt(
  deps: Deps,
  token: string,
  requiredSignerId?: string,
  attemptCounted?: Promise<unknown>,
): Promise<VerifiedExternalJwt> {
  if (Buffer.byteLength(token, 'utf8') > MAX_EXTERNAL_JWT_BYTES) throw new ExternalJwtRefused('token too large');
  const { header, claims } = await decoded(token);
  if (typeof header.alg !== 'string' || !ALGORITHMS.includes(header.alg)) {
    throw new ExternalJwtRefused(`algorithm ${String(header.alg)} not accepted`);
  }
  if (typeof claims.iss !== 'string' || claims.iss === '') throw new ExternalJwtRefused('no issuer');
  const signerId = await deps.store.findIdByUnique(externalJwtSigners, 'issuer', claims.iss);
  const signer = signerId ? (await deps.store.get(externalJwtSigners, signerId))?.doc : undefined;
  if (!signer) throw new ExternalJwtRefused('no signer for the issuer');
  if (requiredSignerId !== undefined && signer.id !== requiredSignerId) {
    throw new ExternalJwtRefused('not the required signer');
  }
  if (!signer.enabled) throw new ExternalJwtRefused(`signer ${signer.id} is disabled`);
  // Without an audience any token the issuer ever minted, for any application, would log in here.
  if (!signer.audience) throw new ExternalJwtRefused(`signer ${signer.id} has no audience`);

  const options = {
    algorithms: ALGORITHMS,
    issuer: signer.issuer,
    audience: signer.audience,
    requiredClaims: REQUIRED_CLAIMS,
    clockTolerance: CLOCK_SKEW_SECONDS,
    currentDate: deps.now(),
  };
  // A login's attempt counter went out with the reads above: no signature is checked before it allowed the attempt.
  await attemptCounted;
  const { createLocalJWKSet, jwtVerify } = await jose();
  try {
    if (signer.certPem) {
      if (header.kid !== signer.kid) throw new ExternalJwtRefused('kid is not the signer certificate');
      const key = new X509Certificate(signer.certPem).publicKey;
      return { signer, payload: (await jwtVerify(token, key, options)).payload };
    }
    if (!signer.jwksEndpoint) throw new ExternalJwtRefused('signer has no keys');
    const jwks = await keySetFor(signer.jwksEndpoint, header.kid, deps.config.jwks, deps.now().getTime());
    return { signer, payload: (await jwtVerify(token, createLocalJWKSet(jwks), options)).payload };
  } catch (error) {
    if (error instanceof ExternalJwtRefused) throw error;
    throw new ExternalJwtRefused(`${signer.id}: ${(error as Error).name}: ${(error as Error).message}`);
  }
}
