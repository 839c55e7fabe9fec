import { defaultDeps } from '#functions/create-deps.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { ok } from '#shared/http/envelope.ts';
import { clientCertificateMissing } from '#shared/http/mtls-address.ts';
import type { Operation, OperationMap } from '#shared/http/operation.ts';
import { atSdkFrontDoor } from '#shared/http/sdk-front-door.ts';
import { CONTROLLER_ROUTES } from '#shared/routes/groups/controller-routes.ts';
import { INFO_ROUTES } from '#shared/routes/groups/info-routes.ts';
import { OIDC_INFO_ROUTES } from '#shared/routes/groups/oidc-routes.ts';
import {
  createControllerSetting,
  deleteControllerSetting,
  detailControllerSetting,
  detailControllerSettingEffective,
  listControllerSettings,
  patchControllerSetting,
  updateControllerSetting,
} from './controller-settings.ts';
import { listControllers } from './controllers.ts';
import { oidcDiscovery, oidcKeys, oidcLoggedOut } from './oidc-discovery.ts';
import { detailSpec, detailSpecBody, listSpecs } from './specs.ts';
import { ENUMERATED_CAPABILITIES, versionInfo } from './version-info.ts';

/**
 * `GET /version` (and `/`): the version document, except at the SDKs' front door, where it sends the SDK on to the
 * mTLS address (421 with `ziti-ctrl-address`; `sdk-front-door.ts` says why).
 */
const version: Operation = async (request, deps) => {
  if (atSdkFrontDoor(deps, request)) throw clientCertificateMissing(deps, new ApiError('MISDIRECTED_REQUEST'));
  return ok(versionInfo(deps, request.baseUrl));
};

export const operations: OperationMap = {
  listRoot: version,
  listVersion: version,
  listEnumeratedCapabilities: async () => ok([...ENUMERATED_CAPABILITIES]),
  listControllers,
  listSpecs,
  detailSpec,
  detailSpecBody,
  listControllerSettings,
  createControllerSetting,
  detailControllerSetting,
  detailControllerSettingEffective,
  updateControllerSetting,
  patchControllerSetting,
  deleteControllerSetting,
  oidcDiscovery,
  oidcKeys,
  oidcLoggedOut,
};

/** The routes this function serves: its part of the route table (`shared/routes/route-table.ts`). */
export const routes = [...INFO_ROUTES, ...CONTROLLER_ROUTES, ...OIDC_INFO_ROUTES];

export const handler = createGroupHandler('info', routes, operations, defaultDeps);
