import { sessionEndingDeps } from '#functions/create-deps.ts';
import { crudOperations } from '#shared/crud/crud-operations.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { ok } from '#shared/http/envelope.ts';
import { callerOf, loadedOnUse, type OperationMap } from '#shared/http/operation.ts';
import { IDENTITIES, IDENTITY_ROUTES } from '#shared/routes/groups/identity-routes.ts';
import { identityView } from '#shared/views/identity-view.ts';
import { identityApi } from './identity-api.ts';
import { identityTypeOperations } from './identity-types.ts';

export const operations: OperationMap = {
  getCurrentIdentity: async (request, deps) => ok(await identityView(deps, callerOf(request).identity)),
  ...crudOperations(IDENTITIES, identityApi),
  ...loadedOnUse(['disableIdentity', 'enableIdentity', 'removeIdentityMfa'], () => import('./identity-actions.ts')),
  // Loaded with their first request: an identity's authenticators and enrollments, the role attributes in use and the
  // network's summary (which counts every entity type) are console pages, not an SDK's or a pipeline's path.
  ...loadedOnUse(
    ['getIdentityAuthenticators', 'getIdentityEnrollments', 'listIdentityRoleAttributes', 'listSummary'],
    () => import('./identity-lists.ts'),
  ),
  ...identityTypeOperations,
  // Loaded with their first request: the identity's service-config overrides and its trace are rarely set.
  ...loadedOnUse(
    ['listIdentitysServiceConfigs', 'associateIdentitysServiceConfigs', 'disassociateIdentitysServiceConfigs'],
    () => import('./identity-service-configs.ts'),
  ),
  ...loadedOnUse(['updateIdentityTracing'], () => import('./identity-tracing.ts')),
};

/** The routes this function serves: its part of the route table (`shared/routes/route-table.ts`). */
export const routes = IDENTITY_ROUTES;

export const handler = createGroupHandler('identities', routes, operations, sessionEndingDeps);
