import { X509Certificate } from 'node:crypto';
import { ApiError, invalidField } from '../errors/api-error.ts';
import type { Deps } from '../ports/deps.ts';
import { isClientLeaf, isSignedByCa } from './ca-trust.ts';
import { chainsTo, fingerprintOf, firstCertificateOf } from './certificates.ts';
import { networkCa } from './network-ca.ts';
import { allCas } from './trusted-cas.ts';

/**
 * The fields of a cert authenticator an admin registers from a certificate (400 on `certPem` unless it is a client
 * certificate): it must chain to the network's signing CA (then it is extendable like an enrolled one) or to a verified
 * third-party CA (then it goes with that CA).
 */
export async function registeredCertificate(deps: Deps, certPem: string) {
  const certificate = firstCertificateOf(certPem);
  if (!certificate) throw invalidField('certPem', 'must be a PEM certificate', certPem.slice(0, 64));
  if (!(await isClientLeaf(certificate))) {
    throw invalidField(
      'certPem',
      'must be a client certificate (not a CA; digitalSignature, clientAuth)',
      certPem.slice(0, 64),
    );
  }
  const fields = {
    method: 'cert' as const,
    certPem: certificate.toString(),
    fingerprint: fingerprintOf(certificate),
    certIssuedAt: new Date(certificate.validFrom).toISOString(),
  };
  const network = await networkCa(deps);
  if (chainsTo(certificate, [new X509Certificate(network.signingCertPem)])) {
    return { ...fields, isIssuedByNetwork: true };
  }
  const ca = (await allCas(deps)).find((candidate) => candidate.isVerified && isSignedByCa(certificate, candidate));
  if (!ca) throw new ApiError('CERTIFICATE_FAILED_VALIDATION');
  return { ...fields, isIssuedByNetwork: false, caId: ca.id };
}
