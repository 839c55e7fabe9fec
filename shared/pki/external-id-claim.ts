import type { X509Certificate } from 'node:crypto';
import type { ExternalIdClaim } from '../entities/ca.ts';
import { commonNameOf } from './certificates.ts';

/** The values a certificate holds at a claim's location: its common name, or its URI or e-mail alternative names. */
function candidatesAt(certificate: X509Certificate, location: ExternalIdClaim['location']): string[] {
  if (location === 'COMMON_NAME') {
    const name = commonNameOf(certificate);
    return name ? [name] : [];
  }
  const prefix = location === 'SAN_URI' ? 'URI:' : 'email:';
  return (certificate.subjectAltName ?? '')
    .split(/,\s*/)
    .filter((entry) => entry.startsWith(prefix))
    .map((entry) => entry.slice(prefix.length));
}

function matches(value: string, claim: ExternalIdClaim): boolean {
  switch (claim.matcher) {
    case 'ALL':
      return true;
    case 'PREFIX':
      return value.startsWith(claim.matcherCriteria);
    case 'SUFFIX':
      return value.endsWith(claim.matcherCriteria);
    case 'SCHEME':
      return value.startsWith(`${claim.matcherCriteria}:`);
  }
}

/**
 * The external id a CA's `externalIdClaim` reads from a certificate (the reference's order: the first candidate at
 * the location the matcher accepts, then split by `parserCriteria` and taken at `index` when the parser is SPLIT);
 * undefined when the certificate carries none.
 */
export function externalIdOf(certificate: X509Certificate, claim: ExternalIdClaim): string | undefined {
  const value = candidatesAt(certificate, claim.location).find((candidate) => matches(candidate, claim));
  if (value === undefined) return undefined;
  if (claim.parser === 'NONE') return value || undefined;
  const parts = value.split(claim.parserCriteria);
  const part = parts[claim.index];
  return part ? part : undefined;
}
