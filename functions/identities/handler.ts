import { defaultDeps } from '#functions/create-deps.ts';
import { crudOperations } from '#shared/crud/crud-operations.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { ok } from '#shared/http/envelope.ts';
import { callerOf, type OperationMap } from '#shared/http/operation.ts';
import { IDENTITIES } from '#shared/routes/groups/identity-routes.ts';
import { identityView } from '#shared/views/identity-view.ts';
import { disableIdentity, enableIdentity, removeIdentityMfa } from './identity-actions.ts';
import { identityApi } from './identity-api.ts';
import {
  getIdentityAuthenticators,
  getIdentityEnrollments,
  identityTypeOperations,
  listIdentityRoleAttributes,
  listSummary,
} from './identity-lists.ts';
import {
  associateIdentitysServiceConfigs,
  disassociateIdentitysServiceConfigs,
  listIdentitysServiceConfigs,
} from './identity-service-configs.ts';
import { updateIdentityTracing } from './identity-tracing.ts';

export const operations: OperationMap = {
  getCurrentIdentity: async (request, deps) => ok(await identityView(deps, callerOf(request).identity)),
  ...crudOperations(IDENTITIES, identityApi),
  disableIdentity,
  enableIdentity,
  removeIdentityMfa,
  getIdentityAuthenticators,
  getIdentityEnrollments,
  listIdentityRoleAttributes,
  listSummary,
  ...identityTypeOperations,
  listIdentitysServiceConfigs,
  associateIdentitysServiceConfigs,
  disassociateIdentitysServiceConfigs,
  updateIdentityTracing,
};

export const handler = createGroupHandler('identities', operations, defaultDeps);
