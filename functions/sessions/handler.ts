import { defaultDeps } from '#functions/create-deps.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { loadedOnUse, type OperationMap } from '#shared/http/operation.ts';
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

export const handler = createGroupHandler('sessions', operations, defaultDeps);
