import type { JWTPayload } from 'jose';
import type { ExternalJwtSigner } from '../entities/external-jwt-signer.ts';
import { identities } from '../entities/identity.ts';
import type { Deps } from '../ports/deps.ts';
import { fitsKey } from '../store/keys.ts';
import { ExternalJwtRefused } from './verify-external-jwt.ts';

/**
 * The id of the identity a verified token names: the claim the signer names (`sub` unless set) is the identity's
 * `externalId` when the signer says so, else its id. Undefined when the claim names no identity.
 */
export async function identityIdOfClaim(
  deps: Deps,
  signer: ExternalJwtSigner,
  payload: JWTPayload,
): Promise<string | undefined> {
  const claim = payload[signer.claimsProperty];
  if (typeof claim !== 'string' || claim === '' || !fitsKey(claim)) {
    throw new ExternalJwtRefused(`claim ${signer.claimsProperty} is not an identity reference`);
  }
  return signer.useExternalId ? deps.store.findIdByUnique(identities, 'externalId', claim) : claim;
}
