import { createApiSessionOps, sessionExpiry } from '#shared/auth/api-session-store.ts';
import type { AuthPolicy } from '#shared/entities/auth-policy.ts';
import { type Identity, identities } from '#shared/entities/identity.ts';
import { mfas } from '#shared/entities/mfa.ts';
import { ApiError, invalidField } from '#shared/errors/api-error.ts';
import { extJwtQueriesOf, presentsExtJwt } from '#shared/ext-jwt/secondary-ext-jwt.ts';
import { ok } from '#shared/http/envelope.ts';
import { type Operation, queryValue } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { totpAuthQuery } from '#shared/mfa/auth-queries.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { limitLoginAttempt, recordLoginFailure } from '#shared/rate-limit/login-limits.ts';
import { keys, storedAttributes } from '#shared/store/keys.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { currentApiSessionView } from '#shared/views/api-session-view.ts';
import {
  AUTH_METHODS,
  type AuthenticateBody,
  type AuthMethod,
  authenticateBodySchema,
  passwordCredentialsSchema,
} from './authenticate-body.ts';
import { authenticateWithCertificate, type CertificateSubject } from './certificate-login.ts';
import { authenticateWithExternalJwt, authenticateWithPassword, type LoginSubject } from './primary-authenticators.ts';

function methodOf(value: string | undefined): AuthMethod {
  if (value === undefined || value === '') throw invalidField('method', 'method in query is required', null);
  if (!(AUTH_METHODS as readonly string[]).includes(value)) {
    throw invalidField('method', `method in query should be one of [${AUTH_METHODS.join(' ')}]`, value);
  }
  return value as AuthMethod;
}

/** Whether the identity's auth policy lets it use this primary method. */
function policyAllows(policy: AuthPolicy, method: AuthMethod): boolean {
  if (method === 'password') return policy.primary.updb.allowed;
  if (method === 'cert') return policy.primary.cert.allowed;
  // ext-jwt: the signer was checked against the policy while the token was verified.
  return policy.primary.extJwt.allowed;
}

/**
 * The write on the identity that the new session commits with. Its condition is the kit's reference check (the
 * identity exists, no delete has marked it) plus "not disabled now", so a login racing a delete or a disable cannot
 * leave a live session behind. It also stores the environment and SDK the client reported, if any.
 */
function identityCommitOps(deps: Deps, identity: Identity, body: AuthenticateBody): WriteOp[] {
  const identityId = identity.id;
  const condition =
    'attribute_exists(PK) AND (attribute_not_exists(deletingUntil) OR deletingUntil < :wall) AND ' +
    '(disabled = :false OR (attribute_type(disabledUntil, :string) AND disabledUntil < :now))';
  const values: Record<string, unknown> = {
    ':now': deps.now().toISOString(),
    ':wall': new Date().toISOString(),
    ':false': false,
    ':string': 'S',
  };
  const key = keys.entity(identities.collection, identityId);
  const onConditionFailed = () => new ApiError('INVALID_AUTH');
  const reported = storedAttributes({
    ...(body.envInfo ? { envInfo: body.envInfo } : {}),
    ...(body.sdkInfo ? { sdkInfo: body.sdkInfo } : {}),
  });
  if (Object.keys(reported).length === 0) {
    const check = { TableName: deps.store.tableName, Key: key, ConditionExpression: condition };
    return [{ item: { ConditionCheck: { ...check, ExpressionAttributeValues: values } }, onConditionFailed }];
  }
  const sets = ['updatedAt = :now', ...Object.keys(reported).map((field) => `${field} = :${field}`)];
  for (const [field, value] of Object.entries(reported)) values[`:${field}`] = value;
  const update: WriteOp = {
    item: {
      Update: {
        TableName: deps.store.tableName,
        Key: key,
        // Bumping the version makes a concurrent admin update of the identity retry instead of overwriting this.
        UpdateExpression: `SET ${sets.join(', ')} ADD version :one`,
        ConditionExpression: condition,
        ExpressionAttributeValues: { ...values, ':one': 1 },
      },
    },
    onConditionFailed,
  };
  // The identity's filter record (what lists filter on) follows its new `updatedAt`.
  return [update, ...deps.store.filterRecordOps(identities, { ...identity, updatedAt: String(values[':now']) })];
}

/** A password login whose wrong password marks its source address as failing for the username (`login-limits.ts`). */
async function passwordLogin(deps: Deps, sourceIp: string, body: AuthenticateBody, username: string) {
  try {
    return await authenticateWithPassword(deps, body);
  } catch (error) {
    if (error instanceof ApiError && error.code === 'INVALID_AUTH') await recordLoginFailure(deps, sourceIp, username);
    throw error;
  }
}

/** `POST /authenticate?method=password|cert|ext-jwt`: a new API session, its token in the body and `zt-session`. */
export const authenticate: Operation = async (request, deps) => {
  const method = methodOf(queryValue(request, 'method'));
  const body = parseWith(authenticateBodySchema, request.body);

  // Malformed credentials are a 400 that costs nothing; the rest are counted before any hash or signature is paid for.
  const username = method === 'password' ? parseWith(passwordCredentialsSchema, body).username : undefined;
  await limitLoginAttempt(deps, request.sourceIp, username);
  let subject: LoginSubject | CertificateSubject;
  if (method === 'password') subject = await passwordLogin(deps, request.sourceIp, body, username!);
  else if (method === 'cert') subject = await authenticateWithCertificate(deps, request.clientCertPem);
  else subject = await authenticateWithExternalJwt(deps, request.headers, request.logger);
  const { authenticatorId, identity, policy } = subject;
  if (!policyAllows(policy, method)) throw new ApiError('INVALID_AUTH');

  // A policy's secondary external JWT is given with the login (a bearer token beside the password or certificate,
  // or the primary ext-jwt login was that signer's); otherwise the session stays partial until a request brings it.
  const secondarySigner = policy.secondary.requireExtJwtSigner;
  const extJwtPending =
    secondarySigner !== null &&
    !(method === 'ext-jwt' && authenticatorId === secondarySigner) &&
    !(await presentsExtJwt(deps, request.headers, secondarySigner, identity.id, request.logger));
  // TOTP is asked for when the identity has enrolled it, or its policy requires it (enrolled or not yet).
  const mfa = await deps.store.get(mfas, identity.id);
  const totpPending = policy.secondary.requireTotp || mfa?.doc.isVerified === true;
  const { token, session, ops } = createApiSessionOps(deps, {
    identityId: identity.id,
    authenticatorId,
    ipAddress: request.sourceIp,
    configTypes: body.configTypes ?? [],
    totpPending,
    extJwtPending,
    ...('cert' in subject ? subject.cert : {}),
  });
  await deps.store.transact([...ops, ...identityCommitOps(deps, identity, body)]);

  request.logger.info('api session created', { identityId: identity.id, apiSessionId: session.id, method });
  const expiry = sessionExpiry(deps, session);
  const view = currentApiSessionView(deps, session, identity.name, token);
  // The policy and the MFA are in hand: no second read of them for the queries.
  const authQueries = [
    ...(totpPending ? [totpAuthQuery(mfa?.doc.isVerified === true)] : []),
    ...(extJwtPending ? await extJwtQueriesOf(deps, secondarySigner) : []),
  ];
  return ok(
    { ...view, authQueries },
    {
      'zt-session': token,
      'expiration-seconds': String(expiry.expirationSeconds),
      'expires-at': expiry.expiresAt,
      // The reference's hint that an admin asked this certificate to be extended.
      ...(session.isCertExtendRequested ? { 'ziti-authenticator-extend-requested': 'true' } : {}),
    },
  );
};
