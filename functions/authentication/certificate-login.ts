import { X509Certificate } from 'node:crypto';
import { type AuthPolicy, authPolicies, DEFAULT_AUTH_POLICY_ID } from '#shared/entities/auth-policy.ts';
import { type Authenticator, authenticatorSchema, authenticators } from '#shared/entities/authenticator.ts';
import { type Ca, cas } from '#shared/entities/ca.ts';
import { type Identity, identities, isDisabledAt } from '#shared/entities/identity.ts';
import { type Mfa, mfas } from '#shared/entities/mfa.ts';
import { type Revocation, revocations } from '#shared/entities/revocation.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import { clientCertificateMissing } from '#shared/http/mtls-address.ts';
import { isClientLeaf, isSignedByCa } from '#shared/pki/ca-trust.ts';
import { chainsTo, commonNameOf, fingerprintOf, isExpiredAt } from '#shared/pki/certificates.ts';
import { externalIdOf } from '#shared/pki/external-id-claim.ts';
import { networkCa } from '#shared/pki/network-ca.ts';
import { allCas } from '#shared/pki/trusted-cas.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { listChildren, validChildren } from '#shared/store/children.ts';
import { uniqueMarkerOf } from '#shared/store/entity-store.ts';
import { fitsKey, keys } from '#shared/store/keys.ts';
import { authPolicyOf, NOTHING } from './primary-authenticators.ts';

/** What a certificate login proved, with what the API session says of the certificate. */
export interface CertificateSubject {
  readonly authenticatorId: string;
  /** Whether the certificate is a stored authenticator's (not a CA's external id claim), which the session ends with. */
  readonly endsWithAuthenticator: boolean;
  readonly identity: Identity;
  readonly policy: AuthPolicy;
  /** The identity's MFA enrollment when the login read it (`null`: none stored). */
  readonly mfa?: Mfa | null;
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

/** What a certificate login reads of the one who holds the certificate. */
interface Holder {
  readonly authenticator: Authenticator | undefined;
  readonly identityId: string | undefined;
  readonly identity: Identity | undefined;
  readonly policy: AuthPolicy | undefined;
  readonly mfa: Mfa | null | undefined;
  readonly fingerprintRevoked: Revocation | undefined;
  readonly identityRevoked: Revocation | undefined;
}

/**
 * Everything a login with a certificate the network issued needs, in one wave beside the throttle counter: the
 * certificate's CN is its identity's id, so the fingerprint's marker (strongly consistent: the authenticator exists),
 * the identity, its MFA enrollment, the default auth policy and both revocations that could refuse it are one batch,
 * and the identity's authenticators one index query (eventually consistent, trusted only for the authenticator the
 * marker names with this very fingerprint, whose certificate never changes; the flags an admin sets on it, extend or
 * key roll requested, show from a login about a second later, once the index caught up). No `holder` when the
 * certificate is not such (another CA's, a CN that is not the marker's identity, an index not yet caught up): the
 * caller then reads step by step, from the authenticator the marker names (`markedId`, read strongly here) and with
 * the default auth policy this batch read.
 */
async function holderByCommonName(
  deps: Deps,
  leaf: X509Certificate,
  fingerprint: string,
  throttle: () => Promise<void>,
): Promise<{ holder?: Holder; markedId: string | undefined; defaultPolicy: AuthPolicy | undefined }> {
  // The subject's common name: the identity's id in every certificate the network issues.
  const cn = commonNameOf(leaf) || undefined;
  const [, read, children] = await Promise.all([
    throttle(),
    deps.store.readTogether(
      [
        { def: identities, id: cn ?? NOTHING },
        { def: mfas, id: cn ?? NOTHING },
        { def: authPolicies, id: DEFAULT_AUTH_POLICY_ID },
        { def: revocations, id: fingerprint },
        { def: revocations, id: cn ?? NOTHING },
      ],
      [keys.unique(authenticators.collection, 'fingerprint', fingerprint)],
    ),
    cn && fitsKey(cn) ? listChildren(deps, identities.collection, cn, authenticators.collection) : [],
  ]);
  const marker = uniqueMarkerOf(read.items[0]);
  const [identity, mfa, defaultPolicyRead, fingerprintRevoked, identityRevoked] = read.entities;
  const first = { markedId: marker?.entityId, defaultPolicy: defaultPolicyRead?.doc };
  if (!cn || !marker || marker.carried.identityId !== cn) return first;
  const authenticator = validChildren(deps, children, authenticatorSchema).find(
    (candidate) => candidate.id === marker.entityId && candidate.fingerprint === fingerprint,
  );
  if (!authenticator) return first;
  const policy = identity ? await authPolicyOf(deps, identity.doc, first.defaultPolicy) : first.defaultPolicy;
  return {
    ...first,
    holder: {
      authenticator,
      identityId: cn,
      identity: identity?.doc,
      policy,
      mfa: mfa?.doc ?? null,
      fingerprintRevoked: fingerprintRevoked?.doc,
      identityRevoked: identityRevoked?.doc,
    },
  };
}

/**
 * The same, read step by step: the authenticator the fingerprint's marker names (or a CA's external id claim), then
 * the identity, its MFA enrollment and both revocations in one batch, then its auth policy unless it is the default
 * one the first batch read. For certificates another CA issued, or registered by an admin, whose CN names no identity.
 */
async function holderStepByStep(
  deps: Deps,
  leaf: X509Certificate,
  fingerprint: string,
  first: { readonly markedId: string | undefined; readonly defaultPolicy: AuthPolicy | undefined },
): Promise<Holder> {
  const authenticator = first.markedId ? (await deps.store.get(authenticators, first.markedId))?.doc : undefined;
  const identityId = authenticator ? authenticator.identityId : await identityIdByClaim(deps, leaf);
  if (!identityId) {
    return {
      authenticator,
      identityId,
      identity: undefined,
      policy: undefined,
      mfa: undefined,
      fingerprintRevoked: undefined,
      identityRevoked: undefined,
    };
  }
  const read = await deps.store.readTogether([
    { def: identities, id: identityId },
    { def: mfas, id: identityId },
    { def: revocations, id: fingerprint },
    { def: revocations, id: identityId },
  ]);
  const [identity, mfa, fingerprintRevoked, identityRevoked] = read.entities;
  const policy = await authPolicyOf(deps, identity?.doc, first.defaultPolicy);
  return {
    authenticator,
    identityId,
    identity: identity?.doc,
    policy,
    mfa: mfa?.doc ?? null,
    fingerprintRevoked: fingerprintRevoked?.doc,
    identityRevoked: identityRevoked?.doc,
  };
}

/**
 * `authenticate?method=cert`. The TLS layer (API Gateway's mTLS against the truststore, or the local server) proved
 * the caller holds the certificate's key; here the certificate must be an authenticator's (by SHA-1 fingerprint, §b)
 * and chain to the CA that vouches for it, or name an identity through a CA's external id claim. Expired
 * certificates pass only when the auth policy allows them; a JTI revocation of the fingerprint, or an IDENTITY
 * revocation newer than the certificate, refuses it. No signature is made: a login costs KMS nothing. `throttle`
 * counts the attempt, before anything is checked: with the first reads.
 */
export async function authenticateWithCertificate(
  deps: Deps,
  clientCertPem: string | undefined,
  throttle: () => Promise<void>,
): Promise<CertificateSubject> {
  if (!clientCertPem) {
    await throttle();
    throw clientCertificateMissing(
      deps,
      new ApiError('INVALID_AUTH', { message: 'Certificate authentication needs a client certificate.' }),
    );
  }
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(clientCertPem);
  } catch {
    await throttle();
    throw refused();
  }
  if (!(await isClientLeaf(leaf))) {
    await throttle();
    throw refused();
  }
  const fingerprint = fingerprintOf(leaf);
  const byName = await holderByCommonName(deps, leaf, fingerprint, throttle);
  const holder = byName.holder ?? (await holderStepByStep(deps, leaf, fingerprint, byName));
  const { authenticator, identityId, identity, policy, fingerprintRevoked, identityRevoked } = holder;
  if (authenticator && !(await chainHolds(deps, leaf, authenticator))) throw refused();
  if (!identityId) throw refused();
  const now = deps.now();
  if (!identity || !policy || isDisabledAt(identity, now)) throw refused();
  if (isExpiredAt(leaf, now) && !policy.primary.cert.allowExpiredCerts) throw refused();
  if (fingerprintRevoked?.type === 'JTI') throw refused();
  const issuedAt = authenticator?.certIssuedAt ?? new Date(leaf.validFrom).toISOString();
  if (identityRevoked?.type === 'IDENTITY' && issuedAt < identityRevoked.createdAt) throw refused();

  const extendable = authenticator?.isIssuedByNetwork === true;
  return {
    authenticatorId: authenticator?.id ?? `claim:${identityId}`,
    endsWithAuthenticator: authenticator !== undefined,
    identity,
    policy,
    ...(holder.mfa !== undefined ? { mfa: holder.mfa } : {}),
    cert: {
      isCertExtendable: extendable,
      isCertExtendRequested: extendable && authenticator?.isExtendRequested === true,
      isCertKeyRollRequested: extendable && authenticator?.isKeyRollRequested === true,
    },
  };
}
