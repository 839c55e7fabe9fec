import type { JWTPayload } from 'jose';
import * as z from 'zod';
import type { ExternalJwtSigner } from '#shared/entities/external-jwt-signer.ts';
import { identities, newIdentity } from '#shared/entities/identity.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import { bearerTokenOf } from '#shared/ext-jwt/bearer-token.ts';
import { ExternalJwtRefused, verifyExternalJwt } from '#shared/ext-jwt/verify-external-jwt.ts';
import { ok } from '#shared/http/envelope.ts';
import { documented, type Operation, type OperationRequest } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { newId } from '#shared/ids.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { limitLoginAttempt } from '#shared/rate-limit/login-limits.ts';
import { usableRoleAttributes } from '#shared/schemas/role-attribute.ts';
import { fitsKey } from '#shared/store/keys.ts';
import { freeName } from './enroll-with-certificate.ts';
import { authenticatorOps, caBundlePem, certificateForCsr, inUse } from './enrollment-token.ts';

const tokenBodySchema = z.object({ clientCsr: z.string().nullable().optional() });

/** The value at a claim path: a top-level claim name, or a `/`-separated pointer into nested claims. */
function claimAt(payload: JWTPayload, selector: string): unknown {
  const path = selector.startsWith('/') ? selector.slice(1).split('/') : [selector];
  let value: unknown = payload;
  for (const part of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** Role attributes from a claim: one string or a list of strings (others ignored), at most 32 as everywhere. */
function attributesAt(payload: JWTPayload, selector: string | null | undefined): string[] {
  if (!selector) return [];
  const value = claimAt(payload, selector);
  return usableRoleAttributes(Array.isArray(value) ? value : [value], 32);
}

/** The verified token and its signer, or 401 for any token the controller does not trust (the reason is logged). */
async function verifiedToken(request: OperationRequest, deps: Deps) {
  try {
    const token = bearerTokenOf(request.headers);
    if (!token) throw new ExternalJwtRefused('no bearer token');
    return await verifyExternalJwt(deps, token, request.headers['ziti-token-issuer-id'] || undefined);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    request.logger.info('token enrollment refused', { reason: (error as Error).message });
    throw new ApiError('INVALID_AUTH');
  }
}

/** The external id the signer's claim gives (what later ext-jwt logins match), or 401 without one. */
function externalIdOf(signer: ExternalJwtSigner, payload: JWTPayload): string {
  const claim = payload[signer.claimsProperty];
  if (typeof claim !== 'string' || claim === '' || !fitsKey(claim)) {
    throw new ApiError('INVALID_AUTH', { message: `The token has no usable ${signer.claimsProperty} claim.` });
  }
  return claim;
}

/**
 * `POST /enroll/token` (`Authorization: Bearer <JWT of an external JWT signer>`, optional `ziti-token-issuer-id`):
 * the token's subject becomes a new identity (its `externalId` = the signer's claim, name and role attributes from
 * the signer's claim selectors, the signer's enrollment auth policy). With `clientCsr` the identity also gets a
 * certificate (signer's `enrollToCertEnabled`); without, it logs in with its tokens (`enrollToTokenEnabled`). A subject
 * that already has an identity is 409 `ENROLLMENT_EXISTS`.
 */
export const enrollToken: Operation = documented(
  async (request, deps) => {
    await limitLoginAttempt(deps, request.sourceIp);
    const body = parseWith(tokenBodySchema, request.body && typeof request.body === 'object' ? request.body : {});
    const { signer, payload } = await verifiedToken(request, deps);
    const toCertificate = typeof body.clientCsr === 'string' && body.clientCsr !== '';
    if (toCertificate ? !signer.enrollToCertEnabled : !signer.enrollToTokenEnabled) {
      throw new ApiError('INVALID_ENROLL_METHOD', {
        message: `The signer does not allow enrolling to ${toCertificate ? 'a certificate' : 'a token'}.`,
      });
    }
    const externalId = externalIdOf(signer, payload);
    if (await deps.store.findIdByUnique(identities, 'externalId', externalId)) {
      throw new ApiError('ENROLLMENT_EXISTS', { message: 'An identity is already enrolled for this token subject.' });
    }
    const id = newId();
    const requested = claimAt(payload, signer.enrollNameClaimsSelector || signer.claimsProperty);
    const name = await freeName(deps, typeof requested === 'string' && requested.trim() !== '' ? requested.trim() : id);
    const now = deps.now().toISOString();
    const identity = newIdentity({
      id,
      name,
      createdAt: now,
      externalId,
      roleAttributes: attributesAt(payload, signer.enrollAttributeClaimsSelector),
      ...(signer.enrollAuthPolicyId ? { authPolicyId: signer.enrollAuthPolicyId } : {}),
    });
    const ops = deps.store.createOps(identities, identity).map(inUse);
    let certificates: { cert: string; ca: string } | undefined;
    if (toCertificate) {
      const issued = await certificateForCsr(deps, body.clientCsr ?? undefined, { kind: 'identity', id });
      certificates = { cert: issued.chainPem, ca: caBundlePem(issued.ca) };
      const credential = {
        method: 'cert' as const,
        certPem: issued.pem,
        fingerprint: issued.fingerprint,
        isIssuedByNetwork: true,
        certIssuedAt: now,
      };
      ops.push(...authenticatorOps(deps, id, credential, true));
    }
    await deps.store.transact(ops);
    deps.metrics.count('Enrollments', { method: 'token' });
    request.logger.info('identity enrolled', { method: 'token', identityId: id, signerId: signer.id });
    return ok(certificates ?? {});
  },
  { body: tokenBodySchema },
);
