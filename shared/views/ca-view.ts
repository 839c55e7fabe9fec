import type { Ca } from '../entities/ca.ts';
import { selfLinks } from './entity-ref.ts';

/** A CA as the API shows it: `verify` while unverified, `jwt` while it auto-enrolls. */
export function caView(ca: Ca) {
  // The reference leaves out an unset claim (a nil pointer) rather than answering null.
  const { verificationToken, externalIdClaim, ...rest } = ca;
  const links: Record<string, { href: string }> = { ...selfLinks('cas', ca.id) };
  if (!ca.isVerified) links.verify = { href: `./cas/${ca.id}/verify` };
  if (ca.isAutoCaEnrollmentEnabled) links.jwt = { href: `./cas/${ca.id}/jwt` };
  return {
    ...rest,
    ...(externalIdClaim ? { externalIdClaim } : {}),
    ...(verificationToken ? { verificationToken } : {}),
    _links: links,
  };
}
