import type { Route } from '../route.ts';

/** This deployment as controllers, its API specs and its controller settings (served by the info group). */
export const CONTROLLER_ROUTES: readonly Route[] = [];
