import { verifyAgainstNothing, verifyPassword } from '#shared/auth/password-hash.ts';
import { type AuthPolicy, authPolicies } from '#shared/entities/auth-policy.ts';
import { authenticators } from '#shared/entities/authenticator.ts';
import { type Identity, identities, isDisabledAt } from '#shared/entities/identity.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import { identityIdOfClaim } from '#shared/ext-jwt/identity-of-claim.ts';
import { bearerTokenOf, ExternalJwtRefused, verifyExternalJwt } from '#shared/ext-jwt/verify-external-jwt.ts';
import { parseWith } from '#shared/http/validate.ts';
import type { Logger } from '#shared/log/logger.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { type AuthenticateBody, passwordCredentialsSchema } from './authenticate-body.ts';
import { clearFailedPasswords, NO_AUTHENTICATOR, passwordCounter, recordFailedPassword } from './password-lockout.ts';

/**
 * Who a primary login proved to be: the authenticator used (the external JWT signer's id for ext-jwt), its identity
 * and that identity's auth policy.
 */
export interface LoginSubject {
  readonly authenticatorId: string;
  readonly identity: Identity;
  readonly policy: AuthPolicy;
}

/** A key no entity has, read in place of a missing one so that every login does the same reads. */
const NOTHING = 'none:login-decoy';

const invalidAuth = () => new ApiError('INVALID_AUTH');

/**
 * The authenticator with this id (or none), its identity and its auth policy: always three reads, whether or not each
 * exists, so how long a login takes tells nothing about which usernames exist.
 */
async function subjectOf(deps: Deps, authenticatorId: string | undefined) {
  const authenticator = (await deps.store.get(authenticators, authenticatorId ?? NOTHING))?.doc;
  const identity = (await deps.store.get(identities, authenticator?.identityId ?? NOTHING))?.doc;
  const policy = (await deps.store.get(authPolicies, identity?.authPolicyId ?? NOTHING))?.doc;
  return { authenticator, identity, policy };
}

/** A disabled (or locked) identity is refused before its password is checked or counted, as the reference does. */
function refusesLogin(deps: Deps, identity: Identity | undefined, policy: AuthPolicy | undefined): boolean {
  return !identity || !policy || isDisabledAt(identity, deps.now());
}

/**
 * Username and password against the updb authenticator. Every attempt costs the same: known or unknown username,
 * the same reads, one password hash and one failed-attempt write (against an id nobody has for unknown usernames);
 * wrong passwords of enabled identities count towards their auth policy's lockout.
 */
export async function authenticateWithPassword(deps: Deps, body: AuthenticateBody): Promise<LoginSubject> {
  const { username, password } = parseWith(passwordCredentialsSchema, body);
  const authenticatorId = await deps.store.findIdByUnique(authenticators, 'username', username);
  const { authenticator, identity, policy } = await subjectOf(deps, authenticatorId);
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
  if (authenticator.failedAttempts) await clearFailedPasswords(deps, authenticator.id);
  return { authenticatorId: authenticator.id, identity: identity!, policy: policy! };
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
): Promise<LoginSubject> {
  try {
    const token = bearerTokenOf(headers);
    if (!token) throw new ExternalJwtRefused('no bearer token');
    const { signer, payload } = await verifyExternalJwt(deps, token);
    const identityId = await identityIdOfClaim(deps, signer, payload);
    const identity = (await deps.store.get(identities, identityId ?? NOTHING))?.doc;
    const policy = (await deps.store.get(authPolicies, identity?.authPolicyId ?? NOTHING))?.doc;
    if (!identity || !policy || refusesLogin(deps, identity, policy)) {
      throw new ExternalJwtRefused(`signer ${signer.id}: no enabled identity for the claim`);
    }
    const { allowed, allowedSigners } = policy.primary.extJwt;
    if (!allowed || (allowedSigners.length > 0 && !allowedSigners.includes(signer.id))) {
      throw new ExternalJwtRefused(`identity ${identity.id}: auth policy ${policy.id} refuses signer ${signer.id}`);
    }
    return { authenticatorId: signer.id, identity, policy };
  } catch (error) {
    if (error instanceof ApiError) throw error;
    logger.info('ext-jwt login refused', { reason: (error as Error).message });
    throw invalidAuth();
  }
}
