import type { z } from 'zod';
import { verifyPassword } from '#shared/auth/password-hash.ts';
import { sentKeys } from '#shared/crud/patch-body.ts';
import { authPolicies } from '#shared/entities/auth-policy.ts';
import { type Authenticator, authenticators } from '#shared/entities/authenticator.ts';
import { type Identity, identities } from '#shared/entities/identity.ts';
import { ApiError, notFound } from '#shared/errors/api-error.ts';
import { empty, list, ok } from '#shared/http/envelope.ts';
import { callerOf, type Operation, type OperationRequest } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { parseListParams } from '#shared/list/list-params.ts';
import { pageInMemory } from '#shared/list/page-in-memory.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { limitPasswordAttempt } from '#shared/rate-limit/login-limits.ts';
import { passwordField } from '#shared/schemas/credential-fields.ts';
import { listChildren } from '#shared/store/children.ts';
import type { Stored } from '#shared/store/entity-store.ts';
import { withOptimisticRetry } from '#shared/store/optimistic-retry.ts';
import { authenticatorView } from '#shared/views/authenticator-view.ts';
import {
  credentialsPatchSchema,
  credentialsReplaceSchema,
  patchCredentials,
  replaceCredentials,
  requireUpdb,
} from './authenticator-credentials.ts';
import { passwordCounter, recordFailedPassword } from './password-lockout.ts';

const withCurrentPassword = { currentPassword: passwordField };
const replaceSchema = credentialsReplaceSchema.extend(withCurrentPassword);
const patchSchema = credentialsPatchSchema.extend(withCurrentPassword);

/** The caller's authenticator with this id; 404 for anyone else's, so ids of others' authenticators reveal nothing. */
async function ownAuthenticator(deps: Deps, identityId: string, id: string): Promise<Stored<Authenticator>> {
  const stored = await deps.store.get(authenticators, id);
  if (!stored || stored.doc.identityId !== identityId) throw notFound(authenticators.label, id);
  return stored;
}

/**
 * 401 `INVALID_AUTH` unless `currentPassword` is the authenticator's password (constant-time check); a wrong one
 * counts towards the auth policy's lockout like a wrong login, so a borrowed session cannot guess it freely.
 */
async function requireCurrentPassword(
  deps: Deps,
  request: OperationRequest,
  identity: Identity,
  authenticator: Authenticator,
  currentPassword: string,
): Promise<void> {
  // Throttled like a login of that username, so a borrowed session guesses no faster than a login could.
  await limitPasswordAttempt(deps, request.sourceIp, authenticator.username ?? authenticator.id);
  if (authenticator.passwordHash && (await verifyPassword(currentPassword, authenticator.passwordHash))) return;
  const policy = (await deps.store.get(authPolicies, identity.authPolicyId))?.doc;
  await recordFailedPassword(deps, passwordCounter(authenticator.id), identity, policy);
  throw new ApiError('INVALID_AUTH', {
    message: 'The current password is not correct.',
    cause: { field: 'currentPassword', reason: 'the current password is not correct', value: '[hidden]' },
  });
}

/** `GET /current-identity/authenticators`: the caller's own authenticators, filtered and paged like any list. */
export const listCurrentIdentityAuthenticators: Operation = async (request, deps) => {
  const { identity } = callerOf(request);
  const params = await parseListParams(request.query, authenticators.filterable);
  const children = await listChildren(deps, identities.collection, identity.id, authenticators.collection);
  const own = children.map((child) => authenticators.schema.parse(child.doc));
  const page = pageInMemory(own, params, authenticators.filterable);
  const views = page.items.map((doc) => authenticatorView(doc, identity.name));
  return list(views, page.pagination, Object.keys(authenticators.filterable));
};

/** `GET /current-identity/authenticators/{id}`. */
export const detailCurrentIdentityAuthenticator: Operation = async (request, deps) => {
  const { identity } = callerOf(request);
  const stored = await ownAuthenticator(deps, identity.id, request.pathParameters.id ?? '');
  return ok(authenticatorView(stored.doc, identity.name));
};

/**
 * A self-service change of the caller's username and password: checked against the current password on every
 * attempt, so a concurrent change cannot slip in between the check and the write.
 */
function selfServiceChange<I extends { currentPassword: string }>(
  schema: z.ZodType<I>,
  change: (deps: Deps, before: Authenticator, input: I, sent: ReadonlySet<string>) => Promise<Authenticator>,
): Operation {
  return async (request: OperationRequest, deps) => {
    const { identity } = callerOf(request);
    const input = parseWith(schema, request.body ?? {});
    const sent = sentKeys(request.body);
    await withOptimisticRetry(async () => {
      const stored = await ownAuthenticator(deps, identity.id, request.pathParameters.id ?? '');
      requireUpdb(stored.doc);
      await requireCurrentPassword(deps, request, identity, stored.doc, input.currentPassword);
      const next = await change(deps, stored.doc, input, sent);
      const updatedAt = deps.now().toISOString();
      await deps.store.transact(deps.store.replaceOps(authenticators, stored, { ...next, updatedAt }));
    });
    request.logger.info('authenticator changed by its identity', { id: request.pathParameters.id });
    return empty();
  };
}

/** `PUT /current-identity/authenticators/{id}` `{currentPassword, username, password, tags?}`. */
export const updateCurrentIdentityAuthenticator = selfServiceChange(replaceSchema, replaceCredentials);

/** `PATCH /current-identity/authenticators/{id}` `{currentPassword, username?, password?, tags?}`. */
export const patchCurrentIdentityAuthenticator = selfServiceChange(patchSchema, patchCredentials);
