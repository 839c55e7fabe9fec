import { crudOperations } from '#shared/crud/crud-operations.ts';
import { documented, type Operation, type OperationMap } from '#shared/http/operation.ts';
import { AUTH_POLICIES, AUTHENTICATORS } from '#shared/routes/groups/authentication-routes.ts';
import { EXTERNAL_JWT_SIGNERS } from '#shared/routes/groups/external-jwt-signer-routes.ts';
import { authPolicyApi } from './auth-policy-api.ts';
import { authenticatorApi } from './authenticator-api.ts';
import { listClientExternalJwtSigners } from './client-external-jwt-signers.ts';
import { externalJwtSignerApi } from './external-jwt-signer-api.ts';

/** One operation on both APIs: the admin's full list on management, the anonymous client view on client. */
const listSigners = crudOperations(EXTERNAL_JWT_SIGNERS, externalJwtSignerApi)[EXTERNAL_JWT_SIGNERS.names.list]!;
const listExternalJwtSigners: Operation = documented(
  (request, deps) => (request.api === 'client' ? listClientExternalJwtSigners : listSigners)(request, deps),
  listClientExternalJwtSigners.docs ?? {},
);

/** The group's collections (authenticators, auth policies, external JWT signers) through the CRUD kit. */
export const collectionOperations: OperationMap = {
  ...crudOperations(AUTHENTICATORS, authenticatorApi),
  ...crudOperations(AUTH_POLICIES, authPolicyApi),
  ...crudOperations(EXTERNAL_JWT_SIGNERS, externalJwtSignerApi, { list: listExternalJwtSigners }),
};
