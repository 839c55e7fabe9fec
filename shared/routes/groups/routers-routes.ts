import type { Route } from '../route.ts';

/** Edge routers and transit routers. */
export const ROUTERS_ROUTES: readonly Route[] = [];
