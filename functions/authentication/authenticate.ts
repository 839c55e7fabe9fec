import { createApiSessionOps, sessionExpiry } from '#shared/auth/api-session-store.ts';
import type { Deps } from '#shared/deps.ts';
import { type AuthPolicy, authPolicies } from '#shared/entities/auth-policy.ts';
import type { Authenticator } from '#shared/entities/authenticator.ts';
import { identities, isDisabledAt } from '#shared/entities/identity.ts';
import { ApiError, invalidField } from '#shared/http/api-error.ts';
import { ok } from '#shared/http/envelope.ts';
import { type Operation, queryValue } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { keys } from '#shared/store/keys.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { currentApiSessionView } from '#shared/views/api-session-view.ts';
import { AUTH_METHODS, type AuthenticateBody, type AuthMethod, authenticateBodySchema } from './authenticate-body.ts';
import { authenticateWithCertificate, authenticateWithPassword } from './primary-authenticators.ts';

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
  const values: Record<string, unknown> = { ':now': deps.now().toISOString(), ':one': 1 };
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
        ConditionExpression: 'attribute_exists(PK)',
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

  let authenticator: Authenticator;
  if (method === 'password') authenticator = await authenticateWithPassword(deps, body);
  else if (method === 'cert') authenticator = await authenticateWithCertificate(deps, request.clientCertPem);
  else throw new ApiError('INVALID_AUTH', { message: 'No external JWT signer is configured to accept this token.' });

  const identity = (await deps.store.get(identities, authenticator.identityId))?.doc;
  if (!identity || isDisabledAt(identity, deps.now())) throw new ApiError('INVALID_AUTH');
  const policy = (await deps.store.get(authPolicies, identity.authPolicyId))?.doc;
  if (!policy || !policyAllows(policy, method)) throw new ApiError('INVALID_AUTH');

  const { token, session, ops } = createApiSessionOps(deps, {
    identityId: identity.id,
    authenticatorId: authenticator.id,
    ipAddress: request.sourceIp,
    configTypes: body.configTypes ?? [],
    isMfaRequired: policy.secondary.requireTotp,
  });
  const clientInfo = clientInfoOp(deps, identity.id, body);
  await deps.store.transact(clientInfo ? [...ops, clientInfo] : ops);

  request.logger.info('api session created', { identityId: identity.id, apiSessionId: session.id, method });
  const expiry = sessionExpiry(deps, session);
  return ok(currentApiSessionView(deps, session, identity.name, token), {
    'zt-session': token,
    'expiration-seconds': String(expiry.expirationSeconds),
    'expires-at': expiry.expiresAt,
  });
};
