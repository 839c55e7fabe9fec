import * as z from 'zod';
import { appDataSchema } from '../schemas/map-field.ts';
import type { EntityDefinition } from './entity-definition.ts';
import { ROUTER_FILTERABLE, routerShape } from './router.ts';
import { rolesDiffer, routerCostNotices, routerEndedNotices } from './router-notice.ts';

export const edgeRouterSchema = z.object({
  ...routerShape,
  appData: appDataSchema,
  roleAttributes: z.array(z.string()),
  /** Whether the router also tunnels: it then has an identity of type `Router` with the router's id. */
  isTunnelerEnabled: z.boolean(),
});
export type EdgeRouter = z.infer<typeof edgeRouterSchema>;

export const edgeRouters: EntityDefinition<EdgeRouter> = {
  collection: 'edge-routers',
  label: 'edge router',
  schema: edgeRouterSchema,
  // The fingerprint is how a router extending its certificates is found.
  unique: ['name', 'enrollmentToken', 'fingerprint'],
  sortedBy: ['name'],
  filterable: {
    ...ROUTER_FILTERABLE,
    roleAttributes: 'stringSet',
    isTunnelerEnabled: 'boolean',
  },
  roleAttributesField: 'roleAttributes',
  // With the filter record's name, cost and flags, all a session shows of its routers: one query of the routers'
  // id-order partition answers a session, whatever the number of policies (`functions/sessions/session-routers.ts`).
  idOrderFields: ['appData'],
  // New role attributes may change which identities its edge router policies let use it; a disable, re-enroll or
  // delete ends its control channel; a new cost or traversal flag weighs the paths through it anew.
  routerNotices: (before, after) => [
    ...(before !== undefined && after !== undefined && rolesDiffer(before, after) ? [{ kind: 'reach' as const }] : []),
    ...routerEndedNotices(before, after),
    ...routerCostNotices(before, after),
  ],
};
