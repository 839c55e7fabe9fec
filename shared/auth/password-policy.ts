import { type AuthPolicy, authPolicies } from '../entities/auth-policy.ts';
import { identities } from '../entities/identity.ts';
import { invalidField } from '../errors/api-error.ts';
import type { Deps } from '../ports/deps.ts';
import { hashPassword } from './password-hash.ts';

type UpdbRules = AuthPolicy['primary']['updb'];

/** What a password lacks under an auth policy's username/password rules; undefined when it complies. */
export function passwordShortfall(password: string, rules: UpdbRules): string | undefined {
  if (password.length < rules.minPasswordLength) return `must be at least ${rules.minPasswordLength} characters`;
  if (rules.requireMixedCase && !(/[a-z]/.test(password) && /[A-Z]/.test(password))) {
    return 'must mix upper and lower case letters';
  }
  if (rules.requireNumberChar && !/[0-9]/.test(password)) return 'must contain a digit';
  if (rules.requireSpecialChar && !/[^A-Za-z0-9]/.test(password))
    return 'must contain a character other than a letter or digit';
  return undefined;
}

/** The username/password rules of an identity's auth policy (the policy the identity names). */
export async function updbRulesOf(deps: Deps, identityId: string): Promise<UpdbRules | undefined> {
  const identity = await deps.store.get(identities, identityId);
  if (!identity) return undefined;
  return (await deps.store.get(authPolicies, identity.doc.authPolicyId))?.doc.primary.updb;
}

/**
 * Hashes a new password of an identity after checking it against the identity's auth policy; a shortfall is a 400
 * naming `field`.
 */
export async function hashAllowedPassword(
  deps: Deps,
  identityId: string,
  password: string,
  field = 'password',
): Promise<string> {
  const rules = await updbRulesOf(deps, identityId);
  const shortfall = rules ? passwordShortfall(password, rules) : undefined;
  if (shortfall) throw invalidField(field, `${field} ${shortfall} (the identity's auth policy)`, '[hidden]');
  return hashPassword(password);
}
