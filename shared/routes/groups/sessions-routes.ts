import type { Route } from '../route.ts';

/** Sessions (Dial/Bind) on both APIs, posture responses and what is recorded of them. */
export const SESSIONS_ROUTES: readonly Route[] = [];
