import type { ApiSession } from '#shared/auth/api-session.ts';
import { identityOfSession, isLive, owesSecondFactor } from '#shared/auth/api-session-store.ts';
import { authPolicies } from '#shared/entities/auth-policy.ts';
import type { Identity } from '#shared/entities/identity.ts';
import { mfas } from '#shared/entities/mfa.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import { extJwtQueriesOf } from '#shared/ext-jwt/secondary-ext-jwt.ts';
import type { HttpResult } from '#shared/http/http-result.ts';
import { oidcTotpAuthQuery } from '#shared/mfa/auth-queries.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { OidcAuthRequest } from '#shared/store/oidc-items.ts';
import type { CodeHolder } from '../mfa-operations.ts';
import { callbackLocation, redirect, sessionOfAuthRequest } from './oidc-request.ts';

/** The second factors a login's session still owes, as its auth queries name them. */
export interface PendingFactors {
  readonly totp: boolean;
  /** Whether the identity has a verified TOTP enrollment (the TOTP query's `isTotpEnrolled`). */
  readonly isTotpEnrolled: boolean;
  /** The external JWT signer the auth policy still asks a token of, if any. */
  readonly extJwtSigner: string | null;
}

/** What a logged-in session owes now: read of its enrollment and auth policy only where it owes that factor. */
export async function pendingFactorsOf(deps: Deps, session: ApiSession, identity: Identity): Promise<PendingFactors> {
  if (!owesSecondFactor(session)) return { totp: false, isTotpEnrolled: false, extJwtSigner: null };
  const totp = session.totpPending === true;
  const extJwt = session.extJwtPending === true;
  const [mfa, policy] = await Promise.all([
    totp ? deps.store.get(mfas, identity.id) : undefined,
    extJwt ? deps.store.get(authPolicies, identity.authPolicyId) : undefined,
  ]);
  return {
    totp,
    isTotpEnrolled: mfa?.doc.isVerified === true,
    extJwtSigner: extJwt ? (policy?.doc.secondary.requireExtJwtSigner ?? null) : null,
  };
}

/** The pending auth queries, as the reference lists them: the TOTP query, then the policy's external JWT signer's. */
export async function authQueriesOf(deps: Deps, pending: PendingFactors) {
  return [
    ...(pending.totp ? [oidcTotpAuthQuery(pending.isTotpEnrolled)] : []),
    ...(pending.extJwtSigner ? await extJwtQueriesOf(deps, pending.extJwtSigner) : []),
  ];
}

/** 200 `{authQueries}`, with `totp-required: true` while a TOTP code is owed (the reference's `renderAuthQueriesJson`). */
export async function authQueriesAnswer(deps: Deps, pending: PendingFactors): Promise<HttpResult> {
  return {
    statusCode: 200,
    body: { authQueries: await authQueriesOf(deps, pending) },
    headers: { 'cache-control': 'no-store', ...(pending.totp ? { 'totp-required': 'true' } : {}) },
  };
}

/**
 * How a login step answers: a 302 to the callback once its session owes nothing, else 200 with what it still owes
 * (what the SDKs branch on: the status, `totp-required`, the queries' `typeId` and `isTotpEnrolled`).
 */
export async function loginStepAnswer(
  deps: Deps,
  authRequest: OidcAuthRequest,
  pending: PendingFactors,
): Promise<HttpResult> {
  if (!pending.totp && pending.extJwtSigner === null) return redirect(callbackLocation(authRequest));
  return authQueriesAnswer(deps, pending);
}

/**
 * The session an auth request's login opened and its identity, as a second-factor step acts on them: refused (401)
 * when the request was not logged into, or its session has ended since (idle, logged out, too many wrong codes), or
 * its identity was disabled, locked or deleted meanwhile (`identityOfSession` removes such a session).
 */
export async function loginHolderOf(deps: Deps, authRequest: OidcAuthRequest): Promise<CodeHolder> {
  const refused = () =>
    new ApiError('UNAUTHORIZED', {
      message: 'The auth request has no live login: log in with a primary method first.',
    });
  const session = await sessionOfAuthRequest(deps, authRequest);
  if (!session || !isLive(deps, session)) throw refused();
  const identity = await identityOfSession(deps, session);
  if (!identity) throw refused();
  return { session, identity };
}
