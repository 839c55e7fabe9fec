import * as z from 'zod';
import { type EdgeRouter, edgeRouters } from '#shared/entities/edge-router.ts';
import type { EntityDefinition } from '#shared/entities/entity-definition.ts';
import { type TransitRouter, transitRouters } from '#shared/entities/router.ts';
import { ApiError, invalidField } from '#shared/errors/api-error.ts';
import { ok } from '#shared/http/envelope.ts';
import { clientCertificateMissing } from '#shared/http/mtls-address.ts';
import { documented, type Operation, type OperationRequest } from '#shared/http/operation.ts';
import { fingerprintOf, firstCertificateOf } from '#shared/pki/certificates.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { limitLoginAttempt } from '#shared/rate-limit/login-limits.ts';
import type { Stored } from '#shared/store/entity-store.ts';
import { caBundlePem, certificateForCsr, isTokenShaped, tokenOf } from './enrollment-token.ts';

type Router = EdgeRouter | TransitRouter;
type RouterDefinition = EntityDefinition<EdgeRouter> | EntityDefinition<TransitRouter>;

/** The two CSRs of a router: its client certificate's and its listener's (server) certificate's, both required. */
function routerCsrs(request: OperationRequest): { clientCsr: string; serverCsr: string } {
  const body = (request.body && typeof request.body === 'object' ? request.body : {}) as Record<string, unknown>;
  const text = (...names: string[]) => names.map((name) => body[name]).find((v) => typeof v === 'string' && v !== '');
  const clientCsr = text('certCsr', 'clientCsr');
  const serverCsr = text('serverCertCsr', 'serverCsr');
  if (typeof clientCsr !== 'string')
    throw invalidField('certCsr', 'a PEM CSR for the client certificate is required', null);
  if (typeof serverCsr !== 'string') {
    throw invalidField('serverCertCsr', 'a PEM CSR for the server certificate is required', null);
  }
  return { clientCsr, serverCsr };
}

/** Issues a router's client and server certificates (a `Sign` each) and the router's stored certificate fields. */
async function routerCertificates(deps: Deps, routerId: string, csrs: { clientCsr: string; serverCsr: string }) {
  const router = { kind: 'router' as const, id: routerId };
  const client = await certificateForCsr(deps, csrs.clientCsr, router);
  const server = await certificateForCsr(deps, csrs.serverCsr, router, { kind: 'server' });
  return {
    body: { cert: client.chainPem, serverCert: server.chainPem, ca: caBundlePem(client.ca) },
    fields: { fingerprint: client.fingerprint, certPem: client.pem },
  };
}

/** Replaces a router with its new certificate fields, version-checked (a replayed token or concurrent change fails). */
async function saveRouter(
  deps: Deps,
  def: RouterDefinition,
  stored: Stored<Router>,
  next: Router,
  onConflict: ApiError,
) {
  const ops = deps.store.replaceOps(def as EntityDefinition<Router>, stored, next);
  await deps.store.transact(ops.map((op) => ({ ...op, onConditionFailed: () => onConflict })));
}

/** The router (edge or transit) whose outstanding enrollment the token names. */
async function routerWithToken(deps: Deps, token: string): Promise<{ def: RouterDefinition; stored: Stored<Router> }> {
  for (const def of [edgeRouters, transitRouters] as RouterDefinition[]) {
    const id = await deps.store.findIdByUnique(def as EntityDefinition<Router>, 'enrollmentToken', token);
    const stored = id ? await deps.store.get(def as EntityDefinition<Router>, id) : undefined;
    if (stored) return { def, stored };
  }
  throw new ApiError('INVALID_ENROLLMENT_TOKEN');
}

/**
 * erott / trott: a router presents its one-time token with two CSRs and gets its client and server certificates; the
 * token is cleared and the router verified in one version-checked write, so the token works once.
 */
export async function enrollRouter(request: OperationRequest, deps: Deps, method: 'erott' | 'trott') {
  await limitLoginAttempt(deps, request.sourceIp);
  const token = tokenOf(request);
  if (!isTokenShaped(token)) throw new ApiError('INVALID_ENROLLMENT_TOKEN');
  const { def, stored } = await routerWithToken(deps, token.toLowerCase());
  const expected = def === edgeRouters ? 'erott' : 'trott';
  if (method !== expected) {
    throw new ApiError('INVALID_ENROLL_METHOD', { cause: { message: `the token is for ${expected} enrollment` } });
  }
  const expiresAt = stored.doc.enrollmentExpiresAt;
  if (expiresAt && Date.parse(expiresAt) <= deps.now().getTime()) throw new ApiError('ENROLLMENT_EXPIRED');
  const csrs = routerCsrs(request);
  const issued = await routerCertificates(deps, stored.doc.id, csrs);
  const next: Router = {
    ...stored.doc,
    ...issued.fields,
    enrollmentToken: null,
    enrollmentCreatedAt: null,
    enrollmentExpiresAt: null,
    enrollmentJwt: null,
    isVerified: true,
    updatedAt: deps.now().toISOString(),
  };
  await saveRouter(deps, def, stored, next, new ApiError('INVALID_ENROLLMENT_TOKEN'));
  deps.metrics.count('Enrollments', { method });
  request.logger.info('router enrolled', { method, routerId: stored.doc.id });
  return ok(issued.body);
}

const erottBodySchema = z.object({
  token: z.string().optional(),
  clientCsr: z.string().optional(),
  serverCsr: z.string().optional(),
});

/** `POST /enroll/erott` `{token, clientCsr, serverCsr}`. */
export const enrollErOtt: Operation = documented((request, deps) => enrollRouter(request, deps, 'erott'), {
  body: erottBodySchema,
});

const extendBodySchema = z.object({ certCsr: z.string(), serverCertCsr: z.string() });

/**
 * `POST /enroll/extend/router` `{certCsr, serverCertCsr}`, made with the router's current client certificate: new
 * client and server certificates; the router's fingerprint moves to the new client certificate.
 */
export const extendRouterEnrollment: Operation = documented(
  async (request, deps) => {
    await limitLoginAttempt(deps, request.sourceIp);
    const certificate = firstCertificateOf(request.clientCertPem);
    if (!certificate) {
      throw clientCertificateMissing(
        deps,
        new ApiError('UNAUTHORIZED', { message: "Extending needs the router's current client certificate." }),
      );
    }
    const fingerprint = fingerprintOf(certificate);
    const id = await deps.store.findIdByUnique(edgeRouters, 'fingerprint', fingerprint);
    const stored = id ? await deps.store.get(edgeRouters, id) : undefined;
    if (!stored || stored.doc.fingerprint !== fingerprint) {
      throw new ApiError('UNAUTHORIZED', { message: "The client certificate is not an enrolled edge router's." });
    }
    const issued = await routerCertificates(deps, stored.doc.id, routerCsrs(request));
    const next = { ...stored.doc, ...issued.fields, updatedAt: deps.now().toISOString() };
    await saveRouter(deps, edgeRouters, stored, next, new ApiError('UNAUTHORIZED'));
    request.logger.info('router certificates extended', { routerId: stored.doc.id });
    return ok(issued.body);
  },
  { body: extendBodySchema },
);
