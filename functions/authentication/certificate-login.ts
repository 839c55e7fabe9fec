import { X509Certificate } from 'node:crypto';
import { type AuthPolicy, authPolicies } from '#shared/entities/auth-policy.ts';
import { type Authenticator, authenticators } from '#shared/entities/authenticator.ts';
import { type Ca, cas } from '#shared/entities/ca.ts';
import { type Identity, identities, isDisabledAt } from '#shared/entities/identity.ts';
import { revocations } from '#shared/entities/revocation.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import { clientCertificateMissing } from '#shared/http/mtls-address.ts';
import { isClientLeaf, isSignedByCa } from '#shared/pki/ca-trust.ts';
import { chainsTo, fingerprintOf, isExpiredAt } from '#shared/pki/certificates.ts';
import { externalIdOf } from '#shared/pki/external-id-claim.ts';
import { networkCa } from '#shared/pki/network-ca.ts';
import { allCas } from '#shared/pki/trusted-cas.ts';
import type { Deps } from '#shared/ports/deps.ts';

/** What a certificate login proved, with what the API session says of the certificate. */
export interface CertificateSubject {
  readonly authenticatorId: string;
  readonly identity: Identity;
  readonly policy: AuthPolicy;
  readonly cert: {
    readonly isCertExtendable: boolean;
    readonly isCertExtendRequested: boolean;
    readonly isCertKeyRollRequested: boolean;
  };
}

const refused = () => new ApiError('INVALID_AUTH');

const trustsForAuth = (ca: Ca | undefined): ca is Ca => ca?.isVerified === true && ca.isAuthEnabled;

/**
 * Whether the authenticator's certificate chains to what may vouch for it: the network's signing CA for certificates
 * the network issued, else its verified, auth-enabled CA (any such CA for one an admin registered without a CA).
 */
async function chainHolds(deps: Deps, leaf: X509Certificate, authenticator: Authenticator): Promise<boolean> {
  if (authenticator.isIssuedByNetwork) {
    const ca = await networkCa(deps);
    return chainsTo(leaf, [new X509Certificate(ca.signingCertPem)]);
  }
  if (authenticator.caId) {
    const ca = (await deps.store.get(cas, authenticator.caId))?.doc;
    return trustsForAuth(ca) && isSignedByCa(leaf, ca);
  }
  const [network, registered] = await Promise.all([networkCa(deps), allCas(deps)]);
  return (
    chainsTo(leaf, [new X509Certificate(network.signingCertPem)]) ||
    registered.some((ca) => trustsForAuth(ca) && isSignedByCa(leaf, ca))
  );
}

/** The identity a verified, auth-enabled CA's external id claim names in a certificate that CA issued. */
async function identityIdByClaim(deps: Deps, leaf: X509Certificate): Promise<string | undefined> {
  const claimers = (await allCas(deps)).filter((ca) => trustsForAuth(ca) && ca.externalIdClaim);
  for (const ca of claimers) {
    if (!isSignedByCa(leaf, ca)) continue;
    const externalId = externalIdOf(leaf, ca.externalIdClaim!);
    if (externalId) return deps.store.findIdByUnique(identities, 'externalId', externalId);
  }
  return undefined;
}

/**
 * `authenticate?method=cert`. The TLS layer (API Gateway's mTLS against the truststore, or the local server) proved
 * the caller holds the certificate's key; here the certificate must be an authenticator's (by SHA-1 fingerprint, §b)
 * and chain to the CA that vouches for it, or name an identity through a CA's external id claim. Expired
 * certificates pass only when the auth policy allows them; a JTI revocation of the fingerprint, or an IDENTITY
 * revocation newer than the certificate, refuses it. No signature is made: a login costs KMS nothing.
 */
export async function authenticateWithCertificate(
  deps: Deps,
  clientCertPem: string | undefined,
): Promise<CertificateSubject> {
  if (!clientCertPem) {
    throw clientCertificateMissing(
      deps,
      new ApiError('INVALID_AUTH', { message: 'Certificate authentication needs a client certificate.' }),
    );
  }
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(clientCertPem);
  } catch {
    throw refused();
  }
  if (!(await isClientLeaf(leaf))) throw refused();
  const fingerprint = fingerprintOf(leaf);
  const authenticatorId = await deps.store.findIdByUnique(authenticators, 'fingerprint', fingerprint);
  const authenticator = authenticatorId ? (await deps.store.get(authenticators, authenticatorId))?.doc : undefined;
  let identityId: string | undefined;
  if (authenticator) {
    if (!(await chainHolds(deps, leaf, authenticator))) throw refused();
    identityId = authenticator.identityId;
  } else {
    identityId = await identityIdByClaim(deps, leaf);
  }
  if (!identityId) throw refused();

  // The revocations of the certificate and of the identity, one batch read beside the identity's.
  const [identity, revoked] = await Promise.all([
    deps.store.get(identities, identityId).then((stored) => stored?.doc),
    deps.store.getMany(revocations, [fingerprint, identityId]),
  ]);
  const fingerprintRevoked = revoked.find((revocation) => revocation.id === fingerprint);
  const identityRevoked = revoked.find((revocation) => revocation.id === identityId);
  const policy = identity ? (await deps.store.get(authPolicies, identity.authPolicyId))?.doc : undefined;
  const now = deps.now();
  if (!identity || !policy || isDisabledAt(identity, now)) throw refused();
  if (isExpiredAt(leaf, now) && !policy.primary.cert.allowExpiredCerts) throw refused();
  if (fingerprintRevoked?.type === 'JTI') throw refused();
  const issuedAt = authenticator?.certIssuedAt ?? new Date(leaf.validFrom).toISOString();
  if (identityRevoked?.type === 'IDENTITY' && issuedAt < identityRevoked.createdAt) throw refused();

  const extendable = authenticator?.isIssuedByNetwork === true;
  return {
    authenticatorId: authenticator?.id ?? `claim:${identityId}`,
    identity,
    policy,
    cert: {
      isCertExtendable: extendable,
      isCertExtendRequested: extendable && authenticator?.isExtendRequested === true,
      isCertKeyRollRequested: extendable && authenticator?.isKeyRollRequested === true,
    },
  };
}
