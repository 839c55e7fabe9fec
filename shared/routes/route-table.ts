import { AUTHENTICATION_ROUTES } from './groups/authentication-routes.ts';
import { CLIENT_ROUTES } from './groups/client-routes.ts';
import { CONTROLLER_ROUTES } from './groups/controller-routes.ts';
import { DATABASE_ROUTES } from './groups/database-routes.ts';
import { EXTERNAL_JWT_SIGNER_ROUTES } from './groups/external-jwt-signer-routes.ts';
import { FABRIC_ROUTES } from './groups/fabric-routes.ts';
import { IDENTITY_ROUTES } from './groups/identity-routes.ts';
import { INFO_ROUTES } from './groups/info-routes.ts';
import { OIDC_ROUTES } from './groups/oidc-routes.ts';
import { PKI_ROUTES } from './groups/pki-routes.ts';
import { POLICY_ROUTES } from './groups/policy-routes.ts';
import { POLL_ROUTES } from './groups/poll-routes.ts';
import { POSTURE_CHECK_ROUTES } from './groups/posture-check-routes.ts';
import { ROUTERS_ROUTES } from './groups/routers-routes.ts';
import { SERVICES_ROUTES } from './groups/services-routes.ts';
import { SESSIONS_ROUTES } from './groups/sessions-routes.ts';
import type { Route } from './route.ts';

/**
 * Every operation the controller serves, one file of lines per part of the API (`groups/`). The CDK app builds API
 * Gateway's resources and methods from this table and the local server dispatches with it, so the two can never
 * disagree.
 */
export const ROUTES: readonly Route[] = [
  ...INFO_ROUTES,
  ...CONTROLLER_ROUTES,
  ...POLL_ROUTES,
  ...AUTHENTICATION_ROUTES,
  ...EXTERNAL_JWT_SIGNER_ROUTES,
  ...IDENTITY_ROUTES,
  ...SERVICES_ROUTES,
  ...ROUTERS_ROUTES,
  ...POSTURE_CHECK_ROUTES,
  ...POLICY_ROUTES,
  ...CLIENT_ROUTES,
  ...SESSIONS_ROUTES,
  ...PKI_ROUTES,
  ...DATABASE_ROUTES,
  ...FABRIC_ROUTES,
  ...OIDC_ROUTES,
];
