import type { Route } from '../route.ts';
import { CLIENT, route } from '../route-builder.ts';

/** The client API's view of the network after login: its services, their edge routers and terminators, its edge routers, protocols (its poll is `POLL_ROUTES`). */
export const CLIENT_ROUTES: readonly Route[] = [
  route('GET', '/services', CLIENT, 'client', 'authenticated', 'listServices'),
  route('GET', '/services/{id}', CLIENT, 'client', 'authenticated', 'detailService'),
  route('GET', '/services/{id}/edge-routers', CLIENT, 'client', 'authenticated', 'listServiceEdgeRouters'),
  route('GET', '/services/{id}/terminators', CLIENT, 'client', 'authenticated', 'listServiceTerminators'),
  route('GET', '/current-identity/edge-routers', CLIENT, 'client', 'authenticated', 'getCurrentIdentityEdgeRouters'),
  route('GET', '/protocols', CLIENT, 'client', 'none', 'listProtocols'),
];
