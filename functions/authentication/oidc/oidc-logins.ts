import { X509Certificate } from 'node:crypto';
import { ApiError } from '#shared/errors/api-error.ts';
import type { HttpResult } from '#shared/http/http-result.ts';
import type { Operation, OperationRequest } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { fingerprintOf } from '#shared/pki/certificates.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { authRequestLoginOp, type OidcLogin } from '#shared/store/oidc-items.ts';
import { openApiSession, primaryLogin } from '../authenticate.ts';
import { type AuthenticateBody, type AuthMethod, authenticateBodySchema } from '../authenticate-body.ts';
import { loginStepAnswer } from './oidc-login-answer.ts';
import {
  namedAuthRequest,
  type OidcParams,
  oauthError,
  oidcParams,
  param,
  unknownAuthRequest,
} from './oidc-request.ts';

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
 * request cannot write again. A login owing second factors answers 200 `{authQueries}` (and `totp-required: true`
 * when a TOTP code is owed), else a 302 to the callback that gives the code. A refused login answers the legacy
 * login's 401 envelope, as the reference does.
 */
async function oidcLogin(request: OperationRequest, deps: Deps, method: AuthMethod): Promise<HttpResult> {
  const params = oidcParams(request);
  const authRequest = await namedAuthRequest(deps, params);
  if (!authRequest) return unknownAuthRequest();
  if (authRequest.login) return oauthError('invalid_request', 'the auth request is already logged into', 409);
  const body = authenticateBodyOf(request, params);
  const beganAt = deps.now();
  const subject = await primaryLogin(request, deps, method, body);
  const { identity } = subject;
  const loginOf = (apiSessionId: string): OidcLogin => ({
    apiSessionId,
    identityId: identity.id,
    authenticatorId: subject.authenticatorId,
    isAdmin: identity.isAdmin,
    externalId: identity.externalId ?? null,
    configTypes: body.configTypes ?? [],
    certFingerprints: certificateFingerprints(request, method),
    amr: [AMR[method]],
    authTime: Math.floor(beganAt.getTime() / 1000),
    remoteAddress: request.sourceIp,
  });
  const opened = await openApiSession(
    request,
    deps,
    { method, body, subject, beganAt },
    { kind: 'oidc', alsoCommit: (session) => [authRequestLoginOp(deps.store, authRequest.id, loginOf(session.id))] },
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
