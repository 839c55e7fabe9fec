import type { Route } from '../route.ts';

/** The client API's view of the network after login: its services, their edge routers and terminators, its edge routers, service updates, protocols. */
export const CLIENT_ROUTES: readonly Route[] = [];
