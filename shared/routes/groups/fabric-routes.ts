import { crudResource, crudRoutes } from '../crud-resource.ts';
import type { Route } from '../route.ts';
import { FABRIC, route } from '../route-builder.ts';

const READ_ONLY = { actions: ['list', 'detail'], apis: FABRIC } as const;

/** The fabric API's services: the stored services, shown as the reference's fabric shows them. */
export const FABRIC_SERVICES = crudResource('fabric', '/services', 'Service', 'Services', READ_ONLY);
/** The fabric API's terminators: the stored terminators, with the fields the fabric shows. */
export const FABRIC_TERMINATORS = crudResource('fabric', '/terminators', 'Terminator', 'Terminators', READ_ONLY);

/**
 * The fabric API (`/fabric/v1`), read only, for admins: what `ziti fabric list routers|terminators|circuits|services|
 * links` read with the management API's session. Routers are edge and transit routers together, circuits and links
 * what the routers' endpoint tasks keep in the table; names are the reference's operationIds.
 */
export const FABRIC_ROUTES: readonly Route[] = [
  ...crudRoutes(FABRIC_SERVICES),
  route('GET', '/routers', FABRIC, 'fabric', 'admin', 'listRouters'),
  route('GET', '/routers/{id}', FABRIC, 'fabric', 'admin', 'detailRouter'),
  ...crudRoutes(FABRIC_TERMINATORS),
  route('GET', '/links', FABRIC, 'fabric', 'admin', 'listLinks'),
  route('GET', '/links/{id}', FABRIC, 'fabric', 'admin', 'detailLink'),
  route('GET', '/circuits', FABRIC, 'fabric', 'admin', 'listCircuits'),
  route('GET', '/circuits/{id}', FABRIC, 'fabric', 'admin', 'detailCircuit'),
];
