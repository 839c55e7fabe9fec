import type { Route } from '../route.ts';
import { BOTH, CLIENT, route } from '../route-builder.ts';

/**
 * What every enrolled SDK sends on its timers, most of a fleet's requests: its poll (`service-updates`, once a minute)
 * and its API session's refresh (`GET /current-api-session`, every 20 minutes), with the logout that shares the
 * refresh's resource (one resource, one function: the load balancer needs no method rule for it). A function of their
 * own, so their memory is chosen for them alone (`cdk/function-memory.ts`): they wait on one read wave, and the
 * functions they left need more memory for CPU they never spend (the service list's, the password login's argon2id).
 */
export const POLL_ROUTES: readonly Route[] = [
  route('GET', '/current-api-session/service-updates', CLIENT, 'poll', 'authenticated', 'listServiceUpdates'),
  route('GET', '/current-api-session', BOTH, 'poll', 'partial', 'getCurrentAPISession'),
  route('DELETE', '/current-api-session', BOTH, 'poll', 'partial', 'deleteCurrentApiSession'),
];
