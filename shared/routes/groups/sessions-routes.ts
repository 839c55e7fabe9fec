import type { Route } from '../route.ts';
import { CLIENT, MANAGEMENT, route } from '../route-builder.ts';

/** Sessions (Dial/Bind) on both APIs, posture responses and what is recorded of them. */
export const SESSIONS_ROUTES: readonly Route[] = [
  route('GET', '/sessions', CLIENT, 'sessions', 'authenticated', 'listSessions'),
  route('POST', '/sessions', CLIENT, 'sessions', 'authenticated', 'createSession'),
  route('GET', '/sessions/{id}', CLIENT, 'sessions', 'authenticated', 'detailSession'),
  route('DELETE', '/sessions/{id}', CLIENT, 'sessions', 'authenticated', 'deleteSession'),
  route('GET', '/sessions', MANAGEMENT, 'sessions', 'admin', 'listSessions'),
  route('GET', '/sessions/{id}', MANAGEMENT, 'sessions', 'admin', 'detailSession'),
  route('DELETE', '/sessions/{id}', MANAGEMENT, 'sessions', 'admin', 'deleteSession'),
  route('GET', '/sessions/{id}/route-path', MANAGEMENT, 'sessions', 'admin', 'detailSessionRoutePath'),
  route('POST', '/posture-response', CLIENT, 'sessions', 'authenticated', 'createPostureResponse'),
  route('POST', '/posture-response-bulk', CLIENT, 'sessions', 'authenticated', 'createPostureResponseBulk'),
  route('GET', '/identities/{id}/posture-data', MANAGEMENT, 'sessions', 'admin', 'getIdentityPostureData'),
  route(
    'GET',
    '/identities/{id}/failed-service-requests',
    MANAGEMENT,
    'sessions',
    'admin',
    'getIdentityFailedServiceRequests',
  ),
];
