import { X509Certificate } from 'node:crypto';
import { verifyAgainstNothing, verifyPassword } from '#shared/auth/password-hash.ts';
import type { Deps } from '#shared/deps.ts';
import { type Authenticator, authenticators } from '#shared/entities/authenticator.ts';
import { ApiError } from '#shared/http/api-error.ts';
import { parseWith } from '#shared/http/validate.ts';
import { type AuthenticateBody, passwordCredentialsSchema } from './authenticate-body.ts';
import { clearFailedPasswords, recordFailedPassword } from './password-lockout.ts';

const invalidAuth = () => new ApiError('INVALID_AUTH');

/**
 * Username and password against the updb authenticator; unknown users cost the same time as known ones, and wrong
 * passwords count towards the auth policy's lockout.
 */
export async function authenticateWithPassword(deps: Deps, body: AuthenticateBody): Promise<Authenticator> {
  const { username, password } = parseWith(passwordCredentialsSchema, body);
  const authenticatorId = await deps.store.findIdByUnique(authenticators, 'username', username);
  const authenticator = authenticatorId ? (await deps.store.get(authenticators, authenticatorId))?.doc : undefined;
  if (!authenticator?.passwordHash) {
    await verifyAgainstNothing(password);
    throw invalidAuth();
  }
  if (!(await verifyPassword(password, authenticator.passwordHash))) {
    await recordFailedPassword(deps, authenticator);
    throw invalidAuth();
  }
  await clearFailedPasswords(deps, authenticator);
  return authenticator;
}

/**
 * The client certificate's cert authenticator, found by the SHA-1 fingerprint of its DER (the reference's key). The
 * TLS layer (API Gateway mTLS, or the local server) has already proven the caller holds the certificate's key.
 */
export async function authenticateWithCertificate(
  deps: Deps,
  clientCertPem: string | undefined,
): Promise<Authenticator> {
  if (!clientCertPem)
    throw new ApiError('INVALID_AUTH', { message: 'Certificate authentication needs a client certificate.' });
  let fingerprint: string;
  try {
    fingerprint = new X509Certificate(clientCertPem).fingerprint.replaceAll(':', '').toLowerCase();
  } catch {
    throw invalidAuth();
  }
  const authenticatorId = await deps.store.findIdByUnique(authenticators, 'fingerprint', fingerprint);
  const authenticator = authenticatorId ? (await deps.store.get(authenticators, authenticatorId))?.doc : undefined;
  if (!authenticator) throw invalidAuth();
  return authenticator;
}
