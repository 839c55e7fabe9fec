import * as z from 'zod';
import type { ApiSession } from '#shared/auth/api-session.ts';
import {
  apiSessionUpdatedOps,
  markHasSessionsOp,
  releaseEphemeralCertificateSlot,
  reserveEphemeralCertificateSlot,
} from '#shared/auth/api-session-store.ts';
import { crudOperations, getOrNotFound } from '#shared/crud/crud-operations.ts';
import { type ApiSessionCertificate, apiSessionCertificates } from '#shared/entities/api-session-certificate.ts';
import { ApiError, notFound } from '#shared/errors/api-error.ts';
import { API_VERSION_META, empty, list, ok } from '#shared/http/envelope.ts';
import { callerOf, documented, type Operation, type OperationRequest } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { newId } from '#shared/ids.ts';
import { listEntitiesAmong } from '#shared/list/list-entities.ts';
import { parseListParams } from '#shared/list/list-params.ts';
import { firstCertificateOf } from '#shared/pki/certificates.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { API_SESSION_CERTIFICATES } from '#shared/routes/groups/pki-routes.ts';
import { listChildren } from '#shared/store/children.ts';
import { deleteEntity } from '#shared/store/delete-entity.ts';
import { selfLinks } from '#shared/views/entity-ref.ts';
import { caBundlePem, certificateForCsr } from './enrollment-token.ts';

/** How long an ephemeral certificate lives: long enough for an SDK's router connections, short enough not to matter. */
export const EPHEMERAL_CERT_MS = 12 * 3600_000;
/** Ephemeral certificates one API session may hold at once (each a `Sign`; SDKs ask for one or two). */
const MAX_PER_API_SESSION = 16;

const createSchema = z.object({ csr: z.string().min(1) });

function view(doc: ApiSessionCertificate) {
  const { apiSessionId: _apiSessionId, identityId: _identityId, ...rest } = doc;
  return { ...rest, _links: selfLinks('current-api-session/certificates', doc.id) };
}

/** The caller's API session's ephemeral certificate with this id (404 for any other session's). */
async function ownCertificate(request: OperationRequest, deps: Deps) {
  const id = request.pathParameters.id ?? '';
  const stored = await getOrNotFound(deps, apiSessionCertificates, id);
  if (stored.doc.apiSessionId !== callerOf(request).session.id) throw notFound('API session certificate', id);
  return stored;
}

async function idsOfSession(deps: Deps, apiSessionId: string): Promise<string[]> {
  const children = await listChildren(deps, 'api-sessions', apiSessionId, apiSessionCertificates.collection);
  return children.map((child) => String(child.doc.id));
}

/**
 * `POST /current-api-session/certificates {csr}`: a short-lived client certificate from the signing CA (one `Sign`)
 * for the caller's API session, stored under it so that it goes when the session ends.
 */
const createCurrentApiSessionCertificate: Operation = documented(
  async (request, deps) => {
    const { csr: csrPem } = parseWith(createSchema, request.body ?? {});
    const { session, identity } = callerOf(request);
    // The slot is taken before anything is signed, and given back if no certificate comes of it.
    if (!(await reserveEphemeralCertificateSlot(deps, session, MAX_PER_API_SESSION))) {
      throw new ApiError('COULD_NOT_VALIDATE', {
        message: `An API session holds at most ${MAX_PER_API_SESSION} ephemeral certificates; delete one first.`,
      });
    }
    try {
      return await issueEphemeralCertificate(deps, csrPem, session, identity.id);
    } catch (error) {
      await releaseEphemeralCertificateSlot(deps, session);
      throw error;
    }
  },
  { body: createSchema },
);

/** Signs the certificate and stores it under the API session. */
async function issueEphemeralCertificate(deps: Deps, csrPem: string, session: ApiSession, identityId: string) {
  const issued = await certificateForCsr(
    deps,
    csrPem,
    { kind: 'identity', id: identityId },
    {
      validityMs: EPHEMERAL_CERT_MS,
    },
  );
  const certificate = firstCertificateOf(issued.pem)!;
  const now = deps.now().toISOString();
  const doc: ApiSessionCertificate = {
    id: newId(),
    createdAt: now,
    updatedAt: now,
    tags: {},
    apiSessionId: session.id,
    identityId,
    subject: certificate.subject.replaceAll('\n', ','),
    fingerprint: issued.fingerprint,
    validFrom: new Date(certificate.validFrom).toISOString(),
    validTo: new Date(certificate.validTo).toISOString(),
    certificate: issued.pem,
  };
  // Committed only while the API session exists, and marked on it so that ending it removes the certificate; the
  // routers learn the session's new fingerprint with it.
  await deps.store.transact([
    ...deps.store.createOps(apiSessionCertificates, doc),
    markHasSessionsOp(deps, session.tokenHash),
    ...apiSessionUpdatedOps(deps, session),
  ]);
  return {
    statusCode: 201,
    body: {
      data: {
        id: doc.id,
        _links: selfLinks('current-api-session/certificates', doc.id),
        certificate: issued.pem,
        cas: caBundlePem(issued.ca),
      },
      meta: { ...API_VERSION_META },
    },
  };
}

/**
 * Every operation is the type's own: each sees only the caller's API session's certificates, and a delete gives the
 * session's slot back.
 */
export const apiSessionCertificateOperations: Record<string, Operation> = crudOperations(
  API_SESSION_CERTIFICATES,
  { def: apiSessionCertificates, view: (_deps, doc) => view(doc) },
  {
    // A list of the kit's query, among the caller's session's certificates.
    list: documented(
      async (request, deps) => {
        const params = await parseListParams(request.query, apiSessionCertificates.filterable);
        const ids = await idsOfSession(deps, callerOf(request).session.id);
        const page = await listEntitiesAmong(deps, apiSessionCertificates, ids, params);
        return list(page.items.map(view), page.pagination, Object.keys(apiSessionCertificates.filterable));
      },
      { list: { roleFilter: false } },
    ),
    create: createCurrentApiSessionCertificate,
    detail: async (request, deps) => ok(view((await ownCertificate(request, deps)).doc)),
    delete: async (request, deps) => {
      const stored = await ownCertificate(request, deps);
      await deleteEntity(deps, apiSessionCertificates, stored, async () =>
        apiSessionUpdatedOps(deps, callerOf(request).session),
      );
      await releaseEphemeralCertificateSlot(deps, callerOf(request).session);
      return empty();
    },
  },
);
