import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { ok } from '#shared/http/envelope.ts';
import type { Operation, OperationMap } from '#shared/http/operation.ts';
import { ENUMERATED_CAPABILITIES, versionInfo } from './version-info.ts';

const version: Operation = async (request, deps) => ok(versionInfo(deps, request.baseUrl));

export const operations: OperationMap = {
  listRoot: version,
  listVersion: version,
  listEnumeratedCapabilities: async () => ok([...ENUMERATED_CAPABILITIES]),
};

export const handler = createGroupHandler('info', operations);
