import { defaultDeps } from '#functions/create-deps.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import type { OperationMap } from '#shared/http/operation.ts';
import { createSession } from './create-session.ts';
import { getIdentityFailedServiceRequests, getIdentityPostureData } from './posture-admin.ts';
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
  getIdentityPostureData,
  getIdentityFailedServiceRequests,
};

export const handler = createGroupHandler('sessions', operations, defaultDeps);
