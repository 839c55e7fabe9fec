import { defaultDeps } from '#functions/create-deps.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { loadedOnUse, type OperationMap } from '#shared/http/operation.ts';
import { SESSIONS_ROUTES } from '#shared/routes/groups/sessions-routes.ts';
import { createSession } from './create-session.ts';
import { createPostureResponse, createPostureResponseBulk } from './posture-responses.ts';
import { deleteSession, detailSession, detailSessionRoutePath, listSessions } from './sessions.ts';

export const operations: OperationMap = {
  listSessions,
  createSession,
  detailSession,
  deleteSession,
  detailSessionRoutePath,
  createPostureResponse,
  createPostureResponseBulk,
  // An admin's look at an identity's posture: rare, so not in what a client's cold start reads.
  ...loadedOnUse(['getIdentityPostureData', 'getIdentityFailedServiceRequests'], () => import('./posture-admin.ts')),
};

/** The routes this function serves: its part of the route table (`shared/routes/route-table.ts`). */
export const routes = SESSIONS_ROUTES;

export const handler = createGroupHandler('sessions', routes, operations, defaultDeps);
