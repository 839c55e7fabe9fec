import type { Route } from '../route.ts';

/** Posture checks and their types. */
export const POSTURE_CHECK_ROUTES: readonly Route[] = [];
