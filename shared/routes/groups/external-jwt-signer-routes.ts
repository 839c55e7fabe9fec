import { crudResource, crudRoutes } from '../crud-resource.ts';
import type { Route } from '../route.ts';
import { CLIENT, route } from '../route-builder.ts';

export const EXTERNAL_JWT_SIGNERS = crudResource(
  'authentication',
  '/external-jwt-signers',
  'ExternalJwtSigner',
  'ExternalJwtSigners',
);

/** External JWT signers (served by the authentication group). */
export const EXTERNAL_JWT_SIGNER_ROUTES: readonly Route[] = [
  // Anonymous on the client API: a client asks which identity providers it may log in with.
  route('GET', EXTERNAL_JWT_SIGNERS.path, CLIENT, 'authentication', 'none', EXTERNAL_JWT_SIGNERS.names.list),
  ...crudRoutes(EXTERNAL_JWT_SIGNERS),
];
