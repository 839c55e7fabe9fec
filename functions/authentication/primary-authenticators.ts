import { verifyAgainstNothing, verifyPassword } from '#shared/auth/password-hash.ts';
import { type AuthPolicy, authPolicies, DEFAULT_AUTH_POLICY_ID } from '#shared/entities/auth-policy.ts';
import { type Authenticator, authenticators } from '#shared/entities/authenticator.ts';
import { type Identity, identities, isDisabledAt } from '#shared/entities/identity.ts';
import { type Mfa, mfas } from '#shared/entities/mfa.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import { bearerTokenOf } from '#shared/ext-jwt/bearer-token.ts';
import { identityIdOfClaim } from '#shared/ext-jwt/identity-of-claim.ts';
import { ExternalJwtRefused, verifyExternalJwt } from '#shared/ext-jwt/verify-external-jwt.ts';
import { parseWith } from '#shared/http/validate.ts';
import type { Logger } from '#shared/log/logger.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { UniqueMarker } from '#shared/store/entity-store.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { type AuthenticateBody, passwordCredentialsSchema } from './authenticate-body.ts';
import { clearFailedPasswordsOp, NO_AUTHENTICATOR, passwordCounter, recordFailedPassword } from './password-lockout.ts';

/**
 * Who a primary login proved to be: the authenticator used (the external JWT signer's id for ext-jwt), its identity
 * and that identity's auth policy; the identity's MFA enrollment when the login read it with them (`null`: none
 * stored), and writes the session's transaction must commit (a right password ending a run of wrong ones).
 */
export interface LoginSubject {
  readonly authenticatorId: string;
  /** Whether `authenticatorId` is a stored authenticator's (a password's), which the session ends with. */
  readonly endsWithAuthenticator: boolean;
  readonly identity: Identity;
  readonly policy: AuthPolicy;
  readonly mfa?: Mfa | null;
  readonly commitOps?: readonly WriteOp[];
}

/** A key no entity has, read in place of a missing one so that every login does the same reads. */
export const NOTHING = 'none:login-decoy';

/**
 * The auth policy of an identity whose login batch read the default one beside it (most identities have it): that
 * one, or another read now. None for no identity.
 */
export async function authPolicyOf(
  deps: Deps,
  identity: Pick<Identity, 'authPolicyId'> | undefined,
  defaultPolicy: AuthPolicy | undefined,
): Promise<AuthPolicy | undefined> {
  if (!identity) return undefined;
  if (identity.authPolicyId === DEFAULT_AUTH_POLICY_ID) return defaultPolicy;
  return (await deps.store.get(authPolicies, identity.authPolicyId))?.doc;
}

const invalidAuth = () => new ApiError('INVALID_AUTH');

/** What a login by a unique value (username, fingerprint) reads of the one who holds it. */
interface HolderOfMarker {
  readonly authenticator: Authenticator | undefined;
  readonly identity: Identity | undefined;
  readonly policy: AuthPolicy | undefined;
  readonly mfa: Mfa | null;
}

/**
 * The authenticator a marker names, its identity, the identity's MFA enrollment and auth policy. The marker carries
 * the identity's id, so all four are one batch read: the default auth policy is read beside them (most identities
 * have it), another policy costs one more read. A marker without the identity's id (written before markers carried
 * it, until the integrity fix rewrites it) costs the authenticator's read first, and the batch reads it again to keep
 * its one shape. The batch is the same whether or not each exists (decoy keys for those that do not), so a login's
 * reads tell apart no usernames but those whose identity has an auth policy of its own: one read more (a few
 * milliseconds beside the password hash's tens, which every attempt pays). Carrying the policy on the marker would
 * close that, but the marker is the authenticator's and the policy the identity's, which a policy change would have
 * to rewrite on every marker of the identity.
 */
async function holderOfMarker(deps: Deps, marker: UniqueMarker | undefined): Promise<HolderOfMarker> {
  const authenticatorId = marker?.entityId ?? NOTHING;
  let identityId = marker?.carried.identityId;
  if (marker && identityId === undefined) {
    identityId = (await deps.store.get(authenticators, authenticatorId))?.doc.identityId;
  }
  const read = await deps.store.readTogether([
    { def: authenticators, id: authenticatorId },
    { def: identities, id: identityId ?? NOTHING },
    { def: mfas, id: identityId ?? NOTHING },
    { def: authPolicies, id: DEFAULT_AUTH_POLICY_ID },
  ]);
  const [storedAuthenticator, storedIdentity, storedMfa, defaultPolicy] = read.entities;
  let authenticator = storedAuthenticator?.doc;
  let identity = storedIdentity?.doc;
  // Only what belongs together counts: the authenticator of the marker, of the identity the marker names.
  if (authenticator && authenticator.identityId !== identityId) authenticator = undefined;
  if (!authenticator) identity = undefined;
  // An unknown username reads no policy more than one of the default policy (the default one, read already).
  const policy = identity ? await authPolicyOf(deps, identity, defaultPolicy?.doc) : defaultPolicy?.doc;
  return { authenticator, identity, policy, mfa: identity ? (storedMfa?.doc ?? null) : null };
}

/** A disabled (or locked) identity is refused before its password is checked or counted, as the reference does. */
function refusesLogin(deps: Deps, identity: Identity | undefined, policy: AuthPolicy | undefined): boolean {
  return !identity || !policy || isDisabledAt(identity, deps.now());
}

/**
 * Username and password against the updb authenticator, given the username's marker (read beside the login's
 * throttle counters). Every attempt costs the same: known or unknown username, the same reads, one password hash and
 * one failed-attempt write (against an id nobody has for unknown usernames); wrong passwords of enabled identities
 * count towards their auth policy's lockout. A right password after wrong ones resets the count in the session's
 * own transaction.
 */
export async function authenticateWithPassword(
  deps: Deps,
  body: AuthenticateBody,
  marker: UniqueMarker | undefined,
): Promise<LoginSubject> {
  const { password } = parseWith(passwordCredentialsSchema, body);
  const { authenticator, identity, policy, mfa } = await holderOfMarker(deps, marker);
  const hash = authenticator?.passwordHash;
  if (!authenticator || !hash || refusesLogin(deps, identity, policy)) {
    await verifyAgainstNothing(password);
    await recordFailedPassword(deps, passwordCounter(NO_AUTHENTICATOR), undefined, undefined);
    throw invalidAuth();
  }
  if (!(await verifyPassword(password, hash))) {
    await recordFailedPassword(deps, passwordCounter(authenticator.id), identity, policy);
    throw invalidAuth();
  }
  return {
    authenticatorId: authenticator.id,
    endsWithAuthenticator: true,
    identity: identity!,
    policy: policy!,
    mfa,
    ...(authenticator.failedAttempts ? { commitOps: [clearFailedPasswordsOp(deps, authenticator.id)] } : {}),
  };
}

/**
 * A JWT from an external JWT signer (`Authorization: Bearer`): verified against its signer, then the claim the signer
 * names (`sub` unless set) is the identity's `externalId` (when the signer says so) or its id. The identity's auth
 * policy must allow ext-jwt with this signer (any signer when the policy lists none). Every refusal is 401
 * `INVALID_AUTH`; why goes to the log, the token never does.
 */
export async function authenticateWithExternalJwt(
  deps: Deps,
  headers: Readonly<Record<string, string | undefined>>,
  logger: Pick<Logger, 'info'>,
  attemptCounted?: Promise<unknown>,
): Promise<LoginSubject> {
  try {
    const token = bearerTokenOf(headers);
    if (!token) throw new ExternalJwtRefused('no bearer token');
    const { signer, payload } = await verifyExternalJwt(deps, token, undefined, attemptCounted);
    const identityId = await identityIdOfClaim(deps, signer, payload);
    // The identity, its MFA enrollment and the default auth policy in one batch; another policy is one more read.
    const read = await deps.store.readTogether([
      { def: identities, id: identityId ?? NOTHING },
      { def: mfas, id: identityId ?? NOTHING },
      { def: authPolicies, id: DEFAULT_AUTH_POLICY_ID },
    ]);
    const identity = read.entities[0]?.doc;
    const policy = await authPolicyOf(deps, identity, read.entities[2]?.doc);
    if (!identity || !policy || refusesLogin(deps, identity, policy)) {
      throw new ExternalJwtRefused(`signer ${signer.id}: no enabled identity for the claim`);
    }
    const { allowed, allowedSigners } = policy.primary.extJwt;
    if (!allowed || (allowedSigners.length > 0 && !allowedSigners.includes(signer.id))) {
      throw new ExternalJwtRefused(`identity ${identity.id}: auth policy ${policy.id} refuses signer ${signer.id}`);
    }
    // A signer is no authenticator of the identity: the session does not end with it.
    return {
      authenticatorId: signer.id,
      endsWithAuthenticator: false,
      identity,
      policy,
      mfa: read.entities[1]?.doc ?? null,
    };
  } catch (error) {
    if (error instanceof ApiError) throw error;
    logger.info('ext-jwt login refused', { reason: (error as Error).message });
    throw invalidAuth();
  }
}
