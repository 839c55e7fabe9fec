import { authPolicies } from '../entities/auth-policy.ts';
import { type ExternalJwtSigner, externalJwtSigners } from '../entities/external-jwt-signer.ts';
import type { Identity } from '../entities/identity.ts';
import type { Logger } from '../log/logger.ts';
import type { Deps } from '../ports/deps.ts';
import { bearerTokenOf } from './bearer-token.ts';
import { identityIdOfClaim } from './identity-of-claim.ts';
import { verifyExternalJwt } from './verify-external-jwt.ts';

type Headers = Readonly<Record<string, string | undefined>>;

/**
 * Whether the request's bearer token is a valid JWT of `signerId` naming this identity: the secondary factor an auth
 * policy's `secondary.requireExtJwtSigner` asks for. A refusal's reason goes to the log.
 */
export async function presentsExtJwt(
  deps: Deps,
  headers: Headers,
  signerId: string,
  identityId: string,
  logger: Pick<Logger, 'info'>,
): Promise<boolean> {
  const token = bearerTokenOf(headers);
  if (!token) return false;
  try {
    const { signer, payload } = await verifyExternalJwt(deps, token, signerId);
    if ((await identityIdOfClaim(deps, signer, payload)) === identityId) return true;
    logger.info('secondary ext-jwt refused', { reason: 'the token names another identity' });
  } catch (error) {
    logger.info('secondary ext-jwt refused', { reason: (error as Error).message });
  }
  return false;
}

/**
 * For a session waiting only for its external JWT: whether this request presents a valid one of the signer its
 * identity's auth policy asks for.
 */
export async function extJwtCompletesRequest(
  deps: Deps,
  headers: Headers,
  identity: Identity,
  logger: Pick<Logger, 'info'>,
): Promise<boolean> {
  const policy = (await deps.store.get(authPolicies, identity.authPolicyId))?.doc;
  const signerId = policy?.secondary.requireExtJwtSigner;
  if (!policy || !signerId) return false;
  return presentsExtJwt(deps, headers, signerId, identity.id, logger);
}

/** The auth query that tells a client which identity provider's token to present (the reference's `EXT-JWT`). */
export function extJwtAuthQuery(signer: ExternalJwtSigner) {
  return {
    typeId: 'EXT-JWT',
    provider: 'url',
    id: signer.id,
    httpUrl: signer.externalAuthUrl ?? '',
    clientId: signer.clientId ?? '',
    scopes: signer.scopes,
  };
}

/** The auth query for a policy's required secondary signer, if it names one that exists. */
export async function extJwtQueriesOf(deps: Deps, signerId: string | null | undefined) {
  if (!signerId) return [];
  const signer = (await deps.store.get(externalJwtSigners, signerId))?.doc;
  return signer ? [extJwtAuthQuery(signer)] : [];
}

/** The auth queries a partial session of this identity still has to answer for its external JWT, if any. */
export async function pendingExtJwtQueries(deps: Deps, identity: Identity) {
  const policy = (await deps.store.get(authPolicies, identity.authPolicyId))?.doc;
  return extJwtQueriesOf(deps, policy?.secondary.requireExtJwtSigner);
}
