import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import type { OperationMap } from '#shared/http/operation.ts';

export const operations: OperationMap = {};

export const handler = createGroupHandler('client', operations);
