import type { ApiSession } from '#shared/auth/api-session.ts';
import { createApiSessionOps, sessionExpiry } from '#shared/auth/api-session-store.ts';
import { apiSessionTokenKey } from '#shared/auth/api-session-token-key.ts';
import type { AuthPolicy } from '#shared/entities/auth-policy.ts';
import { authenticators } from '#shared/entities/authenticator.ts';
import { type Identity, identities } from '#shared/entities/identity.ts';
import type { Mfa } from '#shared/entities/mfa.ts';
import { mfas } from '#shared/entities/mfa.ts';
import { ApiError, invalidField } from '#shared/errors/api-error.ts';
import { extJwtQueriesOf, presentsExtJwt } from '#shared/ext-jwt/secondary-ext-jwt.ts';
import { ok } from '#shared/http/envelope.ts';
import type { HttpResult } from '#shared/http/http-result.ts';
import { type Operation, type OperationRequest, queryValue } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { totpAuthQuery } from '#shared/mfa/auth-queries.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { limitLoginAttempt, limitPasswordAttempt } from '#shared/rate-limit/login-limits.ts';
import { type Guard, partialUpdateOps } from '#shared/store/partial-update.ts';
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
 * The write on the identity that a login commits with: the environment and SDK the client reported, when they
 * changed (the version moves, the filter record follows), and only while the identity is still live and enabled. A
 * login that reports nothing new writes nothing of the identity and checks nothing of it in the write either: a
 * session begins at the instant before its identity was read (`beganAt`), so a disable, revocation or delete that
 * lands between that read and this write ends it at its first use, as it ends every older session (`isRevoked`,
 * checked on every request), with no write unit spent on every login to re-check the identity.
 */
function identityCommitOps(deps: Deps, identity: Identity, body: AuthenticateBody): WriteOp[] {
  const reported = {
    ...(body.envInfo && canonical(body.envInfo) !== canonical(identity.envInfo) ? { envInfo: body.envInfo } : {}),
    ...(body.sdkInfo && canonical(body.sdkInfo) !== canonical(identity.sdkInfo) ? { sdkInfo: body.sdkInfo } : {}),
  };
  if (Object.keys(reported).length === 0) return [];
  const now = deps.now().toISOString();
  const enabled: Guard = {
    anyOf: [
      { field: 'disabled', equals: false },
      { field: 'disabledUntil', isText: true, before: now },
    ],
  };
  const refused = () => new ApiError('INVALID_AUTH');
  return partialUpdateOps(deps.store, identities, identity, { ...reported, updatedAt: now }, enabled, refused);
}

/**
 * A password login: its throttle counters, whether its address is remembered for the username and the username's
 * marker in one wave (the marker names the authenticator and its identity, read together next; no hash is paid for
 * before the counters allowed the attempt). A right password remembers the address for the username
 * (`login-limits.ts`) in the session's own transaction.
 */
async function passwordLogin(
  deps: Deps,
  sourceIp: string,
  body: AuthenticateBody,
  username: string,
): Promise<LoginSubject> {
  const [address, marker] = await Promise.all([
    limitPasswordAttempt(deps, sourceIp, username),
    deps.store.findMarker(authenticators, 'username', username),
  ]);
  const subject = await authenticateWithPassword(deps, body, marker);
  return { ...subject, commitOps: [...(subject.commitOps ?? []), ...address.rememberOps()] };
}

/** Canonical JSON (keys sorted) of what an SDK reported, to tell a change from the same report again. */
function canonical(info: Readonly<Record<string, unknown>> | null | undefined): string {
  if (!info) return 'null';
  return JSON.stringify(Object.fromEntries(Object.entries(info).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

/**
 * `POST /authenticate?method=password|cert|ext-jwt`: a new API session, its token in the body and `zt-session`.
 * Each login of a known method is counted (`Logins`, by method and outcome: success or the refusal's error code).
 */
export const authenticate: Operation = async (request, deps) => {
  const method = methodOf(queryValue(request, 'method'));
  try {
    const answer = await login(request, deps, method);
    deps.metrics.count('Logins', { method, outcome: 'success' });
    return answer;
  } catch (error) {
    deps.metrics.count('Logins', { method, outcome: error instanceof ApiError ? error.code : 'UNHANDLED' });
    throw error;
  }
};

/**
 * Who the primary credential of a login proves to be (password, the TLS client certificate, an external JWT), with
 * the login throttles counted first; every refusal is 401 `INVALID_AUTH`. Shared by `POST /authenticate` and the OIDC
 * provider's logins.
 */
export async function primaryLogin(
  request: OperationRequest,
  deps: Deps,
  method: AuthMethod,
  body: AuthenticateBody,
): Promise<LoginSubject | CertificateSubject> {
  // The token key (derived from the server key, read once per process) is made while the credentials are checked.
  apiSessionTokenKey(deps.signers.server).catch(() => {});

  // Malformed credentials are a 400 that costs nothing; the rest are counted before any hash or signature is paid for
  // (the counters go out with the first reads, which need no secret checked).
  let subject: LoginSubject | CertificateSubject;
  if (method === 'password') {
    const { username } = parseWith(passwordCredentialsSchema, body);
    subject = await passwordLogin(deps, request.sourceIp, body, username);
  } else if (method === 'cert') {
    subject = await authenticateWithCertificate(deps, request.clientCertPem, () =>
      limitLoginAttempt(deps, request.sourceIp),
    );
  } else {
    // The counter goes out with the signer's reads; the token's signature waits for it (`attemptCounted`), and a
    // refused attempt is refused whatever its token.
    const counted = limitLoginAttempt(deps, request.sourceIp);
    const [count, verified] = await Promise.allSettled([
      counted,
      authenticateWithExternalJwt(deps, request.headers, request.logger, counted),
    ]);
    if (count.status === 'rejected') throw count.reason;
    if (verified.status === 'rejected') throw verified.reason;
    subject = verified.value;
  }
  if (!policyAllows(subject.policy, method)) throw new ApiError('INVALID_AUTH');
  return subject;
}

/** A proven login, ready to open its session. */
export interface ProvenLogin {
  readonly method: AuthMethod;
  readonly body: AuthenticateBody;
  readonly subject: LoginSubject | CertificateSubject;
  /** The instant before the identity was read (see identityCommitOps). */
  readonly beganAt: Date;
}

/** What opening a session answers: the session, its token, and the second factors it still waits for. */
export interface OpenedSession {
  readonly token: string;
  readonly session: ApiSession;
  readonly totpPending: boolean;
  readonly extJwtPending: boolean;
  readonly mfa: Mfa | undefined;
  /** The external JWT signer the auth policy requires as a second factor, if any. */
  readonly secondarySigner: string | null;
}

/**
 * Opens the API session of a proven login, in one transaction with what the login writes (the SDK's reported
 * environment, a cleared lockout count, a remembered address) and `alsoCommit` (an OIDC auth request's login). The
 * second factors owed are the auth policy's and the identity's MFA enrollment's.
 */
export async function openApiSession(
  request: OperationRequest,
  deps: Deps,
  login: ProvenLogin,
  options: { readonly kind?: 'oidc'; readonly alsoCommit?: (session: ApiSession) => readonly WriteOp[] } = {},
): Promise<OpenedSession> {
  const { method, body, subject, beganAt } = login;
  const { authenticatorId, endsWithAuthenticator, identity, policy } = subject;
  // A policy's secondary external JWT is given with the login (a bearer token beside the password or certificate,
  // or the primary ext-jwt login was that signer's); otherwise the session stays partial until a request brings it.
  const secondarySigner = policy.secondary.requireExtJwtSigner;
  const extJwtPending =
    secondarySigner !== null &&
    !(method === 'ext-jwt' && authenticatorId === secondarySigner) &&
    !(await presentsExtJwt(deps, request.headers, secondarySigner, identity.id, request.logger));
  // TOTP is asked for when the identity has enrolled it, or its policy requires it (enrolled or not yet).
  const mfa = subject.mfa !== undefined ? subject.mfa : (await deps.store.get(mfas, identity.id))?.doc;
  const totpPending = policy.secondary.requireTotp || mfa?.isVerified === true;
  const { token, session, ops } = await createApiSessionOps(deps, {
    beganAt,
    identityId: identity.id,
    authenticatorId,
    endsWithAuthenticator,
    ipAddress: request.sourceIp,
    // Only the client and management APIs serve legacy logins; the OIDC provider's sessions are the client API's.
    openedOn: request.api === 'management' ? 'management' : 'client',
    ...(options.kind ? { kind: options.kind } : {}),
    configTypes: body.configTypes ?? [],
    totpPending,
    extJwtPending,
    ...('cert' in subject ? subject.cert : {}),
  });
  await deps.store.transact([
    ...ops,
    ...identityCommitOps(deps, identity, body),
    ...('commitOps' in subject ? (subject.commitOps ?? []) : []),
    ...(options.alsoCommit?.(session) ?? []),
  ]);
  return { token, session, totpPending, extJwtPending, mfa: mfa ?? undefined, secondarySigner };
}

async function login(request: OperationRequest, deps: Deps, method: AuthMethod): Promise<HttpResult> {
  const body = parseWith(authenticateBodySchema, request.body);
  // Before anything of the identity is read: the session begins here (see identityCommitOps).
  const beganAt = deps.now();
  const subject = await primaryLogin(request, deps, method, body);
  const { session, token, totpPending, extJwtPending, mfa, secondarySigner } = await openApiSession(request, deps, {
    method,
    body,
    subject,
    beganAt,
  });
  const { identity } = subject;
  request.logger.info('api session created', { identityId: identity.id, apiSessionId: session.id, method });
  const expiry = sessionExpiry(deps, session);
  const view = currentApiSessionView(deps, session, identity.name, token);
  // The policy and the MFA are in hand: no second read of them for the queries.
  const authQueries = [
    ...(totpPending ? [totpAuthQuery(mfa?.isVerified === true)] : []),
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
}
