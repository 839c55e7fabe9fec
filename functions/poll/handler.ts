import { defaultDeps } from '#functions/create-deps.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import type { OperationMap } from '#shared/http/operation.ts';
import { POLL_ROUTES } from '#shared/routes/groups/poll-routes.ts';
import { deleteCurrentApiSession, getCurrentAPISession } from './current-api-session.ts';
import { listServiceUpdates } from './service-updates.ts';

export const operations: OperationMap = {
  listServiceUpdates,
  getCurrentAPISession,
  deleteCurrentApiSession,
};

/** The routes this function serves: its part of the route table (`shared/routes/route-table.ts`). */
export const routes = POLL_ROUTES;

export const handler = createGroupHandler('poll', routes, operations, defaultDeps);
