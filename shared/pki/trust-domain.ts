import { X509Certificate } from 'node:crypto';
import type { NetworkCa } from './network-ca.ts';

/**
 * The SPIFFE trust domain of the network's certificates: the `TRUST_DOMAIN` setting, else derived from the root CA
 * (the SHA-1 of its certificate, as the reference derives one when none is configured), so it is stable for the
 * life of the network without anyone choosing it.
 */
export function trustDomainOf(configured: string | undefined, ca: NetworkCa): string {
  if (configured) return configured;
  return new X509Certificate(ca.rootCertPem).fingerprint.replaceAll(':', '').toLowerCase();
}
