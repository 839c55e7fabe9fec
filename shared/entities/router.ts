import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';
import { routerCostNotices, routerEndedNotices } from './router-notice.ts';

/**
 * What every router keeps of its one-time enrollment (`erott` for edge routers, `trott` for transit routers): the
 * token the router presents, when it was made and until when it is good. Enrolling clears them and verifies the
 * router; the enrollment JWT is signed when served (it needs the controller's signer, not stored here).
 */
export const routerEnrollmentShape = {
  enrollmentToken: z.string().nullable(),
  enrollmentCreatedAt: z.string().nullable(),
  enrollmentExpiresAt: z.string().nullable(),
  /** The enrollment JWT, signed once with the enrollment (views never sign); absent on routers made before. */
  enrollmentJwt: z.string().nullable().optional(),
  isVerified: z.boolean(),
  /** The SHA-1 fingerprint of the enrolled certificate; null until the router enrolls. */
  fingerprint: z.string().nullable(),
  /** The client certificate the router enrolled (or last extended) with; absent until then. */
  certPem: z.string().nullable().optional(),
};

/** The fields every router has, edge or transit. */
export const routerShape = {
  ...baseDocumentShape,
  name: z.string(),
  cost: z.number().int(),
  noTraversal: z.boolean(),
  disabled: z.boolean(),
  ...routerEnrollmentShape,
};

/** What lists of every kind of router can filter and sort on. */
export const ROUTER_FILTERABLE = {
  ...BASE_FILTERABLE,
  name: 'string',
  cost: 'number',
  noTraversal: 'boolean',
  disabled: 'boolean',
  isVerified: 'boolean',
  fingerprint: 'string',
} as const;

export const transitRouterSchema = z.object(routerShape);
export type TransitRouter = z.infer<typeof transitRouterSchema>;

/**
 * Transit routers, served at both `/transit-routers` and `/routers` (the reference's two names for one type). Edge
 * routers are their own type (`edge-routers`): they carry role attributes, app data and a tunneler identity, and the
 * reference lists them apart. A name is unique across both types: each one's writes check the other's name marker.
 */
export const transitRouters: EntityDefinition<TransitRouter> = {
  collection: 'routers',
  label: 'router',
  schema: transitRouterSchema,
  // The enrollment token is how an enrolling router is found, so it is unique (and has a marker while outstanding).
  unique: ['name', 'enrollmentToken', 'fingerprint'],
  sortedBy: ['name'],
  filterable: ROUTER_FILTERABLE,
  // A disable, re-enroll or delete ends its control channel; a new cost or traversal flag weighs the paths through it
  // anew.
  routerNotices: (before, after) => [...routerEndedNotices(before, after), ...routerCostNotices(before, after)],
};
