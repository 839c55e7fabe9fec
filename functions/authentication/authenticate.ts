import { createApiSessionOps, sessionExpiry } from '#shared/auth/api-session-store.ts';
import type { Deps } from '#shared/deps.ts';
import type { AuthPolicy } from '#shared/entities/auth-policy.ts';
import { identities } from '#shared/entities/identity.ts';
import { ApiError, invalidField } from '#shared/http/api-error.ts';
import { ok } from '#shared/http/envelope.ts';
import { type Operation, queryValue } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { keys } from '#shared/store/keys.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { currentApiSessionView } from '#shared/views/api-session-view.ts';
import { AUTH_METHODS, type AuthenticateBody, type AuthMethod, authenticateBodySchema } from './authenticate-body.ts';
import { authenticateWithCertificate, authenticateWithPassword, type LoginSubject } from './primary-authenticators.ts';

function methodOf(value: string | undefined): AuthMethod {
  if (value === undefined || value === '') throw invalidField('method', 'method in query is required', null);
  if (!(AUTH_METHODS as readonly string[]).includes(value)) {
    throw invalidField('method', `method in query should be one of [${AUTH_METHODS.join(' ')}]`, value);
  }
  return value as AuthMethod;
}

/** Whether the identity's auth policy lets it use this primary method. */
function policyAllows(policy: AuthPolicy, method: AuthMethod): boolean {
  return method === 'password' ? policy.primary.updb.allowed : method === 'cert' ? policy.primary.cert.allowed : false;
}

/** The identity's reported environment and SDK, stored with the login that reported them. */
function clientInfoOp(deps: Deps, identityId: string, body: AuthenticateBody): WriteOp | undefined {
  if (!body.envInfo && !body.sdkInfo) return undefined;
  const sets = ['updatedAt = :now'];
  const values: Record<string, unknown> = {
    ':now': deps.now().toISOString(),
    ':one': 1,
    ':wall': new Date().toISOString(),
  };
  if (body.envInfo) {
    sets.push('envInfo = :envInfo');
    values[':envInfo'] = body.envInfo;
  }
  if (body.sdkInfo) {
    sets.push('sdkInfo = :sdkInfo');
    values[':sdkInfo'] = body.sdkInfo;
  }
  return {
    item: {
      Update: {
        TableName: deps.store.tableName,
        Key: keys.entity(identities.collection, identityId),
        // Bumping the version makes a concurrent admin update of the identity retry instead of overwriting this.
        UpdateExpression: `SET ${sets.join(', ')} ADD version :one`,
        // As the kit's reference check: the identity exists and no delete has marked it (`deletingUntil`).
        ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(deletingUntil) OR deletingUntil < :wall)',
        ExpressionAttributeValues: values,
      },
    },
    onConditionFailed: () => new ApiError('INVALID_AUTH'),
  };
}

/** `POST /authenticate?method=password|cert|ext-jwt`: a new API session, its token in the body and `zt-session`. */
export const authenticate: Operation = async (request, deps) => {
  const method = methodOf(queryValue(request, 'method'));
  const body = parseWith(authenticateBodySchema, request.body);

  let subject: LoginSubject;
  if (method === 'password') subject = await authenticateWithPassword(deps, body);
  else if (method === 'cert') subject = await authenticateWithCertificate(deps, request.clientCertPem);
  else throw new ApiError('INVALID_AUTH', { message: 'No external JWT signer is configured to accept this token.' });
  const { authenticator, identity, policy } = subject;
  if (!policyAllows(policy, method)) throw new ApiError('INVALID_AUTH');

  const { token, session, ops } = createApiSessionOps(deps, {
    identityId: identity.id,
    authenticatorId: authenticator.id,
    ipAddress: request.sourceIp,
    configTypes: body.configTypes ?? [],
    isMfaRequired: policy.secondary.requireTotp,
  });
  // The session commits only while its identity exists and is not being deleted (the kit's reference check), so a
  // login racing the identity's deletion cannot leave a session behind; reported client info is written with it.
  const identityCheck =
    clientInfoOp(deps, identity.id, body) ??
    deps.store.existsOp(identities.collection, identity.id, () => new ApiError('INVALID_AUTH'));
  await deps.store.transact([...ops, identityCheck]);

  request.logger.info('api session created', { identityId: identity.id, apiSessionId: session.id, method });
  const expiry = sessionExpiry(deps, session);
  return ok(currentApiSessionView(deps, session, identity.name, token), {
    'zt-session': token,
    'expiration-seconds': String(expiry.expirationSeconds),
    'expires-at': expiry.expiresAt,
  });
};
