import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { ok } from '#shared/http/envelope.ts';
import type { Operation, OperationMap } from '#shared/http/operation.ts';
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
import { detailSpec, detailSpecBody, listSpecs } from './specs.ts';
import { ENUMERATED_CAPABILITIES, versionInfo } from './version-info.ts';

const version: Operation = async (request, deps) => ok(versionInfo(deps, request.baseUrl));

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
};

export const handler = createGroupHandler('info', operations);
