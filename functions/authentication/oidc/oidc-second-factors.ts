import { ApiError, invalidField } from '#shared/errors/api-error.ts';
import { empty } from '#shared/http/envelope.ts';
import type { HttpResult } from '#shared/http/http-result.ts';
import type { Operation, OperationRequest } from '#shared/http/operation.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { authRequestAmrOp, type OidcAuthRequest } from '#shared/store/oidc-items.ts';
import { withOptimisticRetry } from '#shared/store/optimistic-retry.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import {
  type CodeHolder,
  deleteEnrollment,
  enrollmentView,
  passOnSession,
  startEnrollment,
  verifiedEnrollment,
  verifyEnrollment,
  withGoodCode,
} from '../mfa-operations.ts';
import { authQueriesAnswer, loginHolderOf, loginStepAnswer, pendingFactorsOf } from './oidc-login-answer.ts';
import { namedAuthRequest, type OidcParams, oidcParams, param, unknownAuthRequest } from './oidc-request.ts';

/**
 * The second factor of an OIDC login (`/oidc/login/totp…`, `/oidc/login/auth-queries`): the legacy MFA's own code
 * (`mfa-operations.ts`: the throttle per source and identity, the lockout count, the per-session miss limit, recovery
 * codes spent once, one transaction with what a code unlocks), acting on the API session the auth request's login
 * opened instead of a caller's. A wrong code is the reference's 400 `INVALID TOTP CODE`, which the SDKs read as "did
 * not verify".
 */

/** The longest code looked at (the legacy MFA body's bound); longer is a malformed request, not a wrong code. */
const MAX_CODE_LENGTH = 64;

/** The reference's `amr` of a TOTP code given. */
const TOTP_AMR = 'totp';

/** A step's `code`, trimmed as the reference trims it; absent or over-long is a 400 before anything is counted. */
function codeOf(params: OidcParams): string {
  const code = param(params, 'code')?.trim();
  if (!code) throw invalidField('code', 'code is required', null);
  if (code.length > MAX_CODE_LENGTH) {
    throw invalidField('code', `code is at most ${MAX_CODE_LENGTH} characters`, code.slice(0, MAX_CODE_LENGTH));
  }
  return code;
}

/** Runs a code check, a wrong code answered as the reference answers it on the OIDC provider. */
async function asOidcCodeCheck<T>(check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (error instanceof ApiError && error.code === 'MFA_INVALID_TOKEN') throw new ApiError('INVALID TOTP CODE');
    throw error;
  }
}

/** The write that records the TOTP factor in the login's `amr` (the tokens' `amr` then carry `totp`), once. */
function totpAmrOps(deps: Deps, authRequest: OidcAuthRequest): WriteOp[] {
  return authRequest.login?.amr.includes(TOTP_AMR) ? [] : [authRequestAmrOp(deps.store, authRequest.id, TOTP_AMR)];
}

/** What a step that gave the TOTP factor answers: the session as the commit left it (`totpPassedOps`). */
async function afterTotpPassed(
  deps: Deps,
  request: OperationRequest,
  holder: CodeHolder,
  authRequest: OidcAuthRequest,
): Promise<HttpResult> {
  const { session, identity } = holder;
  request.logger.info('api session passed mfa', { apiSessionId: session.id, kind: 'oidc' });
  const passed = { ...session, totpPending: false, isMfaRequired: true, isMfaComplete: session.extJwtPending !== true };
  return loginStepAnswer(deps, authRequest, await pendingFactorsOf(deps, passed, identity));
}

/**
 * `GET /oidc/login/auth-queries?id=`: what the auth request's login still owes, as its login step answered it (200
 * `{authQueries}`, `totp-required: true` while a code is owed); nothing before a login. An unknown or expired request
 * is the reference's 401.
 */
export const oidcAuthQueries: Operation = async (request, deps) => {
  const authRequest = await namedAuthRequest(deps, oidcParams(request));
  if (!authRequest) throw new ApiError('INVALID_AUTH', { message: 'The auth request is unknown or expired.' });
  if (!authRequest.login) return authQueriesAnswer(deps, { totp: false, isTotpEnrolled: false, extJwtSigner: null });
  const { session, identity } = await loginHolderOf(deps, authRequest);
  return authQueriesAnswer(deps, await pendingFactorsOf(deps, session, identity));
};

/**
 * `POST /oidc/login/totp` (form or JSON `{id, code}`): a TOTP or recovery code of the identity's verified enrollment
 * gives the login's session its TOTP factor; then a 302 to the callback, or 200 with the external JWT still owed.
 */
export const oidcLoginTotp: Operation = async (request, deps) => {
  const params = oidcParams(request);
  const authRequest = await namedAuthRequest(deps, params);
  if (!authRequest) return unknownAuthRequest();
  const code = codeOf(params);
  const holder = await loginHolderOf(deps, authRequest);
  await asOidcCodeCheck(() =>
    withOptimisticRetry(async () => {
      const stored = await verifiedEnrollment(deps, holder.identity.id, new ApiError('MFA_NOT_ENROLLED'));
      await withGoodCode(deps, request, holder, stored, code, 'totp-or-recovery', (used) =>
        passOnSession(deps, holder, stored, used.doc, totpAmrOps(deps, authRequest)),
      );
    }),
  );
  return afterTotpPassed(deps, request, holder, authRequest);
};

/** The auth request a TOTP enrollment step names and the login's session; unknown requests answered as the login's. */
async function enrollmentStep(
  request: OperationRequest,
  deps: Deps,
): Promise<{ params: OidcParams; authRequest: OidcAuthRequest; holder: CodeHolder } | HttpResult> {
  const params = oidcParams(request);
  const authRequest = await namedAuthRequest(deps, params);
  if (!authRequest) return unknownAuthRequest();
  return { params, authRequest, holder: await loginHolderOf(deps, authRequest) };
}

/**
 * `POST /oidc/login/totp/enroll` (`{id}`): starts a TOTP enrollment for the logged-in identity, as a login whose auth
 * policy requires TOTP before any is enrolled must (its TOTP query says `isTotpEnrolled: false`): 201 with the
 * enrollment as the reference renders it, bare (`id`, `isVerified`, `provisioningUrl`, `recoveryCodes`, ...); 409
 * `MFA_EXISTS` when the identity has one.
 */
export const oidcTotpEnroll: Operation = async (request, deps) => {
  const step = await enrollmentStep(request, deps);
  if (!('holder' in step)) return step;
  const { identity } = step.holder;
  const doc = await startEnrollment(deps, identity.id);
  return {
    statusCode: 201,
    body: await enrollmentView(deps, identity.name, doc),
    headers: { 'cache-control': 'no-store' },
  };
};

/**
 * `DELETE /oidc/login/totp/enroll` (`id`, and `code` once verified): removes the identity's enrollment, as the C SDK
 * does before it starts one again; an unverified one needs no code.
 */
export const oidcTotpEnrollDelete: Operation = async (request, deps) => {
  const step = await enrollmentStep(request, deps);
  if (!('holder' in step)) return step;
  const code = param(step.params, 'code')?.trim();
  await asOidcCodeCheck(() => deleteEnrollment(deps, request, step.holder, code));
  return empty();
};

/**
 * `POST /oidc/login/totp/enroll/verify` (`{id, code}`): a TOTP code of the enrollment started verifies it and gives
 * the login's session its TOTP factor, in one transaction; then a 302 to the callback, or 200 with the external JWT
 * still owed. 404 when no enrollment waits to be verified.
 */
export const oidcTotpEnrollVerify: Operation = async (request, deps) => {
  const step = await enrollmentStep(request, deps);
  if (!('holder' in step)) return step;
  const code = codeOf(step.params);
  await asOidcCodeCheck(() => verifyEnrollment(deps, request, step.holder, code, totpAmrOps(deps, step.authRequest)));
  return afterTotpPassed(deps, request, step.holder, step.authRequest);
};
