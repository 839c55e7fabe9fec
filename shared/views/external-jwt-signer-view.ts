import type { ExternalJwtSigner } from '../entities/external-jwt-signer.ts';
import { selfLinks } from './entity-ref.ts';

/** A signer as an admin sees it. */
export function externalJwtSignerView(doc: ExternalJwtSigner) {
  return {
    ...doc,
    commonName: doc.commonName ?? '',
    enrollToCertEnabled: doc.enrollToCertEnabled ?? false,
    enrollToTokenEnabled: doc.enrollToTokenEnabled ?? false,
    // Plain strings in the reference's model: empty when unset.
    enrollNameClaimsSelector: doc.enrollNameClaimsSelector ?? '',
    enrollAttributeClaimsSelector: doc.enrollAttributeClaimsSelector ?? '',
    enrollAuthPolicyId: doc.enrollAuthPolicyId ?? '',
    _links: selfLinks('external-jwt-signers', doc.id),
  };
}

/** A signer as a client sees it before logging in: where to get a token, never its keys or issuer. */
export function clientSignerView(doc: ExternalJwtSigner) {
  return {
    id: doc.id,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    tags: doc.tags,
    _links: selfLinks('external-jwt-signers', doc.id),
    name: doc.name,
    audience: doc.audience,
    clientId: doc.clientId,
    // The client document requires a string; a signer without a login page has an empty one.
    externalAuthUrl: doc.externalAuthUrl ?? '',
    scopes: doc.scopes,
    targetToken: doc.targetToken,
  };
}
