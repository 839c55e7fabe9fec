import type { Route } from '../route.ts';
import { CLIENT, MANAGEMENT, route } from '../route-builder.ts';

/** External JWT signers (served by the authentication group). */
export const EXTERNAL_JWT_SIGNER_ROUTES: readonly Route[] = [
  // Anonymous on the client API: a client asks which identity providers it may log in with.
  route('GET', '/external-jwt-signers', CLIENT, 'authentication', 'none', 'listExternalJwtSigners'),
  route('GET', '/external-jwt-signers', MANAGEMENT, 'authentication', 'admin', 'listExternalJwtSigners'),
  route('POST', '/external-jwt-signers', MANAGEMENT, 'authentication', 'admin', 'createExternalJwtSigner'),
  route('GET', '/external-jwt-signers/{id}', MANAGEMENT, 'authentication', 'admin', 'detailExternalJwtSigner'),
  route('PUT', '/external-jwt-signers/{id}', MANAGEMENT, 'authentication', 'admin', 'updateExternalJwtSigner'),
  route('PATCH', '/external-jwt-signers/{id}', MANAGEMENT, 'authentication', 'admin', 'patchExternalJwtSigner'),
  route('DELETE', '/external-jwt-signers/{id}', MANAGEMENT, 'authentication', 'admin', 'deleteExternalJwtSigner'),
];
