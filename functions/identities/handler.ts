import { defaultDeps } from '#functions/create-deps.ts';
import { crudOperations } from '#shared/crud/crud-operations.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { ok } from '#shared/http/envelope.ts';
import { callerOf, loadedOnUse, type OperationMap } from '#shared/http/operation.ts';
import { IDENTITIES } from '#shared/routes/groups/identity-routes.ts';
import { identityView } from '#shared/views/identity-view.ts';
import { identityApi } from './identity-api.ts';
import {
  getIdentityAuthenticators,
  getIdentityEnrollments,
  identityTypeOperations,
  listIdentityRoleAttributes,
  listSummary,
} from './identity-lists.ts';

export const operations: OperationMap = {
  getCurrentIdentity: async (request, deps) => ok(await identityView(deps, callerOf(request).identity)),
  ...crudOperations(IDENTITIES, identityApi),
  ...loadedOnUse(['disableIdentity', 'enableIdentity', 'removeIdentityMfa'], () => import('./identity-actions.ts')),
  getIdentityAuthenticators,
  getIdentityEnrollments,
  listIdentityRoleAttributes,
  listSummary,
  ...identityTypeOperations,
  // Loaded with their first request: the identity's service-config overrides and its trace are rarely set.
  ...loadedOnUse(
    ['listIdentitysServiceConfigs', 'associateIdentitysServiceConfigs', 'disassociateIdentitysServiceConfigs'],
    () => import('./identity-service-configs.ts'),
  ),
  ...loadedOnUse(['updateIdentityTracing'], () => import('./identity-tracing.ts')),
};

export const handler = createGroupHandler('identities', operations, defaultDeps);
