import * as z from 'zod';
import { recordCodeMissOnSession, totpPassedOps } from '#shared/auth/api-session-store.ts';
import type { Caller } from '#shared/auth/resolve-caller.ts';
import { authPolicies } from '#shared/entities/auth-policy.ts';
import { type Mfa, mfas } from '#shared/entities/mfa.ts';
import { ApiError, notFound } from '#shared/errors/api-error.ts';
import { API_VERSION_META, empty, ok } from '#shared/http/envelope.ts';
import { callerOf, documented, type Operation, type OperationRequest } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { type CodeKinds, openSecrets, sealSecrets, type UsedCode, useCode } from '#shared/mfa/mfa-codes.ts';
import { newRecoveryCodes, newTotpSecrets, provisioningUrl } from '#shared/mfa/totp.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { recordMfaPassed } from '#shared/posture/posture-data.ts';
import { limitMfaAttempt } from '#shared/rate-limit/login-limits.ts';
import type { Stored } from '#shared/store/entity-store.ts';
import { withOptimisticRetry } from '#shared/store/optimistic-retry.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { recordFailedPassword } from './password-lockout.ts';

/**
 * The caller's TOTP MFA (`/current-identity/mfa…`, `/authenticate/mfa`, `/current-api-session/totp-token`) and the
 * admin's reset. The enrollment is an entity whose id is the identity's (`shared/entities/mfa.ts`); its seed and
 * recovery codes are sealed by the secret box; every accepted code is used up in the same transaction as what it
 * unlocks, and every wrong one counts towards the auth policy's lockout.
 */

const codeSchema = z.object({ code: z.string().max(64) });
const SELF = { self: { href: './current-identity/mfa' } };

function enrollmentOf(deps: Deps, identityId: string): Promise<Stored<Mfa> | undefined> {
  return deps.store.get(mfas, identityId);
}

/**
 * Who gives an MFA code: a session and its identity (the caller of `/current-identity/mfa…`, or the session an OIDC
 * login opened, which nobody presents a token of).
 */
export type CodeHolder = Pick<Caller, 'session' | 'identity'>;

/**
 * A wrong code: counted on the identity's MFA enrollment like a wrong password (the auth policy's lockout, whatever
 * the session's primary method), and on a partial session, which ends after a handful; then refused.
 */
async function refuseCode(deps: Deps, caller: CodeHolder): Promise<never> {
  const policy = (await deps.store.get(authPolicies, caller.identity.authPolicyId))?.doc;
  const counter = { collection: mfas.collection, id: caller.identity.id };
  const [, ended] = await Promise.all([
    recordFailedPassword(deps, counter, caller.identity, policy),
    caller.session.totpPending === true ? recordCodeMissOnSession(deps, caller.session) : false,
  ]);
  if (ended) {
    throw new ApiError('UNAUTHORIZED', { message: 'Too many wrong MFA codes: this session has ended; log in again.' });
  }
  throw new ApiError('MFA_INVALID_TOKEN');
}

/**
 * Commits what a good `code` unlocks (`commit`, given the enrollment with the code used up and its miss count reset),
 * or refuses it (counted towards the lockout) when it is no good. Every attempt is throttled per source and identity
 * before the code is looked at; a good one is given back to the throttle beside its commit, so the owner's own codes
 * never spend the budget that bounds guessing.
 */
export async function withGoodCode<T>(
  deps: Deps,
  request: OperationRequest,
  caller: CodeHolder,
  stored: Stored<Mfa>,
  code: string | undefined,
  kinds: CodeKinds,
  commit: (used: UsedCode) => Promise<T>,
): Promise<T> {
  const attempt = await limitMfaAttempt(deps, request.sourceIp, caller.identity.id);
  const used = code ? await useCode(deps, stored, code, kinds) : undefined;
  if (!used) return refuseCode(deps, caller);
  const reset = used.doc.failedAttempts ? { ...used, doc: { ...used.doc, failedAttempts: 0 } } : used;
  // Given back only once the commit holds: a code replayed at once passes every stale read, but one commit wins, and
  // the replays that lost stay counted.
  const committed = await commit(reset);
  // A give-back that failed leaves the attempt counted: the throttle errs towards refusing, the code stays accepted.
  await attempt.passed().catch((error: unknown) => {
    request.logger.warn('an accepted MFA code stays counted', { error: String(error) });
  });
  return committed;
}

/** The code of a request: its `mfa-validation-code` header, else a body `{code}`. */
function validationCodeOf(request: OperationRequest): string | undefined {
  const header = request.headers['mfa-validation-code'];
  if (header !== undefined && header.trim() !== '') return header.trim();
  const body = codeSchema.safeParse(request.body);
  return body.success ? body.data.code : undefined;
}

/**
 * Commits a used code on the caller's session: the enrollment's replace, the session's TOTP factor given, the MFA
 * posture check's record and `alsoCommit` (an OIDC auth request's `amr`), in one transaction.
 */
export async function passOnSession(
  deps: Deps,
  caller: CodeHolder,
  stored: Stored<Mfa>,
  next: Mfa,
  alsoCommit: readonly WriteOp[] = [],
): Promise<void> {
  const ops: WriteOp[] = [
    ...deps.store.replaceOps(mfas, stored, next),
    ...totpPassedOps(deps, caller.session),
    ...alsoCommit,
  ];
  await recordMfaPassed(deps, { identityId: caller.identity.id, apiSessionId: caller.session.id }, ops);
}

/** Starts an identity's enrollment (unverified) and answers it; `MFA_EXISTS` when the identity has one. */
export async function startEnrollment(deps: Deps, identityId: string): Promise<Mfa> {
  if (await enrollmentOf(deps, identityId)) throw new ApiError('MFA_EXISTS');
  const now = deps.now().toISOString();
  const doc: Mfa = {
    id: identityId,
    createdAt: now,
    updatedAt: now,
    tags: {},
    identityId,
    isVerified: false,
    sealed: await sealSecrets(deps, identityId, await newTotpSecrets()),
    lastTimeStep: 0,
  };
  const [put, ...rest] = deps.store.createOps(mfas, doc);
  // Two enrollments racing: the second finds the first's item.
  await deps.store.transact([{ ...put!, onConditionFailed: () => new ApiError('MFA_EXISTS') }, ...rest]);
  return doc;
}

/** `POST /current-identity/mfa`: starts an enrollment (unverified); 409 when the identity has one. */
export const enrollMfa: Operation = async (request, deps) => {
  const doc = await startEnrollment(deps, callerOf(request).identity.id);
  return { statusCode: 201, body: { data: { id: doc.id, _links: SELF }, meta: { ...API_VERSION_META } } };
};

/** The fields every MFA view shows. */
function entityFields(doc: Mfa) {
  return { id: doc.id, createdAt: doc.createdAt, updatedAt: doc.updatedAt, tags: doc.tags, _links: SELF };
}

/** An enrollment as its views show it: its provisioning URL and recovery codes only while unverified. */
export async function enrollmentView(deps: Deps, identityName: string, doc: Mfa) {
  const view = { ...entityFields(doc), isVerified: doc.isVerified };
  if (doc.isVerified) return view;
  const secrets = await openSecrets(deps, doc);
  return {
    ...view,
    provisioningUrl: await provisioningUrl(deps.config.totpIssuer, identityName, secrets.seed),
    recoveryCodes: secrets.recoveryCodes,
  };
}

/** `GET /current-identity/mfa`: the enrollment; its provisioning URL and recovery codes only while unverified. */
export const detailMfa: Operation = async (request, deps) => {
  const { identity } = callerOf(request);
  // 404 NOT_FOUND before enrollment, as the reference answers (MFA_ENROLLMENT_NOT_STARTED is not its code here).
  const stored = await enrollmentOf(deps, identity.id);
  if (!stored) throw notFound('MFA', identity.id);
  return ok(await enrollmentView(deps, identity.name, stored.doc));
};

/** `GET /current-identity/mfa/qr-code`: the provisioning URL as a PNG QR code (256 px, medium correction). */
export const detailMfaQrCode: Operation = async (request, deps) => {
  const { identity } = callerOf(request);
  const stored = await enrollmentOf(deps, identity.id);
  if (!stored || stored.doc.isVerified) throw notFound('MFA', identity.id);
  const { seed } = await openSecrets(deps, stored.doc);
  // The QR code library (60 KB with its PNG encoder) loads only for this operation.
  const { default: QRCode } = await import('qrcode');
  const png = await QRCode.toBuffer(await provisioningUrl(deps.config.totpIssuer, identity.name, seed), {
    type: 'png',
    width: 256,
    errorCorrectionLevel: 'M',
  });
  return { statusCode: 200, body: new Uint8Array(png), headers: { 'content-type': 'image/png' } };
};

/**
 * Completes an unverified enrollment with a TOTP code (recovery codes are refused) and gives the holder's session its
 * TOTP factor, in one transaction; 404 when there is no enrollment to verify.
 */
export async function verifyEnrollment(
  deps: Deps,
  request: OperationRequest,
  holder: CodeHolder,
  code: string,
  alsoCommit: readonly WriteOp[] = [],
): Promise<void> {
  await withOptimisticRetry(async () => {
    const stored = await enrollmentOf(deps, holder.identity.id);
    if (!stored || stored.doc.isVerified) throw notFound('MFA', holder.identity.id);
    await withGoodCode(deps, request, holder, stored, code, 'totp', (used) =>
      passOnSession(deps, holder, stored, { ...used.doc, isVerified: true }, alsoCommit),
    );
  });
}

/** `POST /current-identity/mfa/verify {code}`: a TOTP code completes the enrollment and this session's MFA. */
export const verifyMfa: Operation = documented(
  async (request, deps) => {
    const { code } = parseWith(codeSchema, request.body);
    await verifyEnrollment(deps, request, callerOf(request), code);
    return empty();
  },
  { body: codeSchema },
);

export async function verifiedEnrollment(deps: Deps, identityId: string, whenMissing: ApiError): Promise<Stored<Mfa>> {
  const stored = await enrollmentOf(deps, identityId);
  if (!stored?.doc.isVerified) throw whenMissing;
  return stored;
}

/** `POST /authenticate/mfa {code}`: a TOTP or recovery code gives the session its second factor. */
export const authenticateMfa: Operation = documented(
  async (request, deps) => {
    const caller = callerOf(request);
    const { code } = parseWith(codeSchema, request.body);
    await withOptimisticRetry(async () => {
      const stored = await verifiedEnrollment(deps, caller.identity.id, new ApiError('MFA_NOT_ENROLLED'));
      await withGoodCode(deps, request, caller, stored, code, 'totp-or-recovery', (used) =>
        passOnSession(deps, caller, stored, used.doc),
      );
    });
    request.logger.info('api session passed mfa', { apiSessionId: caller.session.id });
    return empty();
  },
  { body: codeSchema },
);

/** Removes the holder's enrollment: a verified one only with a TOTP or recovery code; 404 when there is none. */
export async function deleteEnrollment(
  deps: Deps,
  request: OperationRequest,
  holder: CodeHolder,
  code: string | undefined,
): Promise<void> {
  await withOptimisticRetry(async () => {
    const stored = await enrollmentOf(deps, holder.identity.id);
    if (!stored) throw notFound('MFA', holder.identity.id);
    const remove = () => deps.store.transact(deps.store.deleteOps(mfas, stored.doc, stored.version));
    if (!stored.doc.isVerified) return remove();
    return withGoodCode(deps, request, holder, stored, code, 'totp-or-recovery', remove);
  });
}

/** `DELETE /current-identity/mfa`: needs a TOTP or recovery code (`mfa-validation-code`) once verified. */
export const deleteMfa: Operation = async (request, deps) => {
  await deleteEnrollment(deps, request, callerOf(request), validationCodeOf(request));
  return empty();
};

/** `GET /current-identity/mfa/recovery-codes` (TOTP code in `mfa-validation-code` or the body): the unused codes. */
export const detailMfaRecoveryCodes: Operation = async (request, deps) => {
  const caller = callerOf(request);
  const used = await withOptimisticRetry(async () => {
    const stored = await verifiedEnrollment(deps, caller.identity.id, notFound('MFA', caller.identity.id));
    return withGoodCode(deps, request, caller, stored, validationCodeOf(request), 'totp', async (next) => {
      await deps.store.transact(deps.store.replaceOps(mfas, stored, next.doc));
      return next;
    });
  });
  return ok({ ...entityFields(used.doc), recoveryCodes: used.secrets.recoveryCodes });
};

/** `POST /current-identity/mfa/recovery-codes {code}`: twenty new recovery codes replace the old ones. */
export const createMfaRecoveryCodes: Operation = documented(
  async (request, deps) => {
    const caller = callerOf(request);
    const { code } = parseWith(codeSchema, request.body);
    await withOptimisticRetry(async () => {
      const stored = await verifiedEnrollment(deps, caller.identity.id, notFound('MFA', caller.identity.id));
      await withGoodCode(deps, request, caller, stored, code, 'totp-or-recovery', async (used) => {
        const renewed = { seed: used.secrets.seed, recoveryCodes: newRecoveryCodes() };
        const sealed = await sealSecrets(deps, caller.identity.id, renewed);
        await deps.store.transact(deps.store.replaceOps(mfas, stored, { ...used.doc, sealed }));
      });
    });
    return empty();
  },
  { body: codeSchema },
);

/**
 * `POST /current-api-session/totp-token {code}`: a TOTP code given now, recorded on the session for the MFA posture
 * checks (what the token proves), and answered with a token naming that moment.
 */
export const createTotpToken: Operation = documented(
  async (request, deps) => {
    const caller = callerOf(request);
    const { code } = parseWith(codeSchema, request.body);
    await withOptimisticRetry(async () => {
      const stored = await verifiedEnrollment(deps, caller.identity.id, new ApiError('MFA_NOT_ENROLLED'));
      await withGoodCode(deps, request, caller, stored, code, 'totp', (used) =>
        passOnSession(deps, caller, stored, used.doc),
      );
    });
    return ok({ token: crypto.randomUUID(), issuedAt: deps.now().toISOString() });
  },
  { body: codeSchema },
);
