import { X509Certificate } from 'node:crypto';
import type { ApiSession } from '#shared/auth/api-session.ts';
import { extJwtGivenOps } from '#shared/auth/api-session-store.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import { presentsExtJwt } from '#shared/ext-jwt/secondary-ext-jwt.ts';
import type { HttpResult } from '#shared/http/http-result.ts';
import type { Operation, OperationRequest } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { fingerprintOf } from '#shared/pki/certificates.ts';
import type { Deps } from '#shared/ports/deps.ts';
import {
  authRequestAmrOp,
  authRequestLoginOp,
  type OidcAuthRequest,
  type OidcLogin,
} from '#shared/store/oidc-items.ts';
import { openApiSession, primaryLogin } from '../authenticate.ts';
import { type AuthenticateBody, type AuthMethod, authenticateBodySchema } from '../authenticate-body.ts';
import { loginHolderOf, loginStepAnswer, pendingFactorsOf } from './oidc-login-answer.ts';
import { namedAuthRequest, type OidcParams, oidcParams, param, unknownAuthRequest } from './oidc-request.ts';

/** The reference's `amr` of a secondary external JWT given: `ejs:` and its signer. */
const extJwtAmr = (signerId: string) => `ejs:${signerId}`;

/** `amr` of each primary method, as OpenID Connect names them (RFC 8176) where it has a name. */
const AMR: Readonly<Record<AuthMethod, string>> = { password: 'pwd', cert: 'mtls', 'ext-jwt': 'ext-jwt' };

/**
 * What a login step's body says besides its credentials, as `POST /authenticate` takes it: a JSON body's `sdkInfo`,
 * `envInfo` and `configTypes`, and a form's `username`, `password` and (repeated) `configTypes`.
 */
function authenticateBodyOf(request: OperationRequest, params: OidcParams): AuthenticateBody {
  const json = request.body && typeof request.body === 'object' && !Array.isArray(request.body) ? request.body : {};
  const configTypes = params.get('configTypes');
  return parseWith(authenticateBodySchema, {
    ...json,
    ...(param(params, 'username') === undefined ? {} : { username: param(params, 'username') }),
    ...(param(params, 'password') === undefined ? {} : { password: param(params, 'password') }),
    ...(configTypes ? { configTypes } : {}),
  });
}

/** SHA-1 fingerprints of the certificate a login presented, which its tokens are bound to (`z_cfs`). */
function certificateFingerprints(request: OperationRequest, method: AuthMethod): string[] {
  if (method !== 'cert' || !request.clientCertPem) return [];
  try {
    return [fingerprintOf(new X509Certificate(request.clientCertPem))];
  } catch {
    return [];
  }
}

/**
 * A primary login of an auth request (`POST /oidc/login/{password,username,cert,ext-jwt}`): the legacy login's own
 * checks (throttles, lockout, auth policy, the identity enabled; `authenticate.ts: primaryLogin`), then an API session
 * of kind `oidc` opened in one transaction with the auth request's login, which a replay or a second login of the same
 * request cannot write again (a step posted to a request already logged into brings a second factor:
 * {@link secondaryExtJwtStep}). A login owing second factors answers 200 `{authQueries}` (and `totp-required: true`
 * when a TOTP code is owed), else a 302 to the callback that gives the code. A refused login answers the legacy
 * login's 401 envelope.
 */
async function oidcLogin(request: OperationRequest, deps: Deps, method: AuthMethod): Promise<HttpResult> {
  const params = oidcParams(request);
  const authRequest = await namedAuthRequest(deps, params);
  if (!authRequest) return unknownAuthRequest();
  if (authRequest.login) return secondaryExtJwtStep(request, deps, authRequest);
  const body = authenticateBodyOf(request, params);
  const beganAt = deps.now();
  const subject = await primaryLogin(request, deps, method, body);
  const { identity } = subject;
  const secondarySigner = subject.policy.secondary.requireExtJwtSigner;
  const loginOf = ({ id: apiSessionId, extJwtPending }: ApiSession): OidcLogin => ({
    apiSessionId,
    identityId: identity.id,
    authenticatorId: subject.authenticatorId,
    isAdmin: identity.isAdmin,
    externalId: identity.externalId ?? null,
    configTypes: body.configTypes ?? [],
    certFingerprints: certificateFingerprints(request, method),
    amr: [AMR[method], ...(secondarySigner && !extJwtPending ? [extJwtAmr(secondarySigner)] : [])],
    authTime: Math.floor(beganAt.getTime() / 1000),
    remoteAddress: request.sourceIp,
  });
  const opened = await openApiSession(
    request,
    deps,
    { method, body, subject, beganAt },
    { kind: 'oidc', alsoCommit: (session) => [authRequestLoginOp(deps.store, authRequest.id, loginOf(session))] },
  );
  request.logger.info('api session created', {
    identityId: identity.id,
    apiSessionId: opened.session.id,
    method,
    kind: 'oidc',
  });
  // The policy and the MFA are in hand: no second read of them for the answer.
  return loginStepAnswer(deps, authRequest, {
    totp: opened.totpPending,
    isTotpEnrolled: opened.mfa?.isVerified === true,
    extJwtSigner: opened.extJwtPending ? opened.secondarySigner : null,
  });
}

/**
 * A login step posted again to an auth request already logged into, as the C SDK posts it once its application hands
 * it the external JWT the auth policy asks for as a second factor (`Authorization: Bearer`, `{id}`): a token of that
 * signer naming the logged-in identity is recorded on the login's session (and its `amr`, `ejs:<signer>`, as the
 * reference's), whatever else it still owes. The primary credential is not checked again: the session it opened is
 * the login's, and the auth request's id is what the client holds. The answer is the login's next step.
 */
async function secondaryExtJwtStep(
  request: OperationRequest,
  deps: Deps,
  authRequest: OidcAuthRequest,
): Promise<HttpResult> {
  const { session, identity } = await loginHolderOf(deps, authRequest);
  const pending = await pendingFactorsOf(deps, session, identity);
  const signer = pending.extJwtSigner;
  if (signer === null || !(await presentsExtJwt(deps, request.headers, signer, identity.id, request.logger))) {
    return loginStepAnswer(deps, authRequest, pending);
  }
  await deps.store.transact([
    ...extJwtGivenOps(deps, session),
    authRequestAmrOp(deps.store, authRequest.id, extJwtAmr(signer)),
  ]);
  request.logger.info('api session passed ext-jwt', { apiSessionId: session.id, kind: 'oidc' });
  return loginStepAnswer(deps, authRequest, { ...pending, extJwtSigner: null });
}

/** Counts each OIDC login as `POST /authenticate` counts its own (`Logins`, by method and outcome). */
function countedLogin(method: AuthMethod): Operation {
  return async (request, deps) => {
    try {
      const answer = await oidcLogin(request, deps, method);
      deps.metrics.count('Logins', { method, outcome: answer.statusCode < 400 ? 'success' : 'OIDC_REFUSED' });
      return answer;
    } catch (error) {
      deps.metrics.count('Logins', { method, outcome: error instanceof ApiError ? error.code : 'UNHANDLED' });
      throw error;
    }
  };
}

export const oidcLoginPassword = countedLogin('password');
export const oidcLoginCert = countedLogin('cert');
export const oidcLoginExtJwt = countedLogin('ext-jwt');

/** Text for HTML, its markup characters escaped. */
function escaped(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * `GET /oidc/login/{password,username,cert,ext-jwt}`: the login page an auth request was sent to. SDKs read only the
 * `auth-request-id` header (the Go SDK's way to learn the id); a browser gets a minimal form posting back here.
 */
export const oidcLoginPage: Operation = async (request, deps) => {
  const authRequest = await namedAuthRequest(deps, oidcParams(request));
  if (!authRequest) return unknownAuthRequest();
  const id = escaped(authRequest.id);
  const fields =
    request.route.path.endsWith('/password') || request.route.path.endsWith('/username')
      ? '<label>Username <input name="username"></label><label>Password <input name="password" type="password"></label>'
      : '';
  return {
    statusCode: 200,
    body:
      '<!DOCTYPE html><html><head><title>Log in</title></head><body>' +
      `<form method="post"><input type="hidden" name="id" value="${id}">${fields}<button>Log in</button></form>` +
      '</body></html>',
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'auth-request-id': authRequest.id,
      'cache-control': 'no-store',
    },
  };
};
