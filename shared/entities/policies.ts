import * as z from 'zod';
import type { FilterableFields } from '../query/filterable-fields.ts';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type BaseDocument, type EntityDefinition } from './entity-definition.ts';
import { POLICY_SEMANTICS } from './policy-semantics.ts';
import { servicesNotices } from './router-notice.ts';

/**
 * The three policy kinds. Each selects entities of two or three types by role; the kit keeps their selection items
 * (`EntityDefinition.selects`), from which `shared/policy/reach.ts` answers who can reach what at read time.
 */

/**
 * Change markers of what identities see of services (the client's `lastChangeAt`). An identity polls only the
 * markers of the roles it answers to — `#all`, its `@id`, each `#attribute` — plus one global marker, so a change
 * moves `lastChangeAt` only for identities that may see it: a service policy moves the markers of its identity roles,
 * an identity (or its service-config overrides) its own `@id` (kept on the identity's item, where every poll reads it:
 * `shared/store/change-markers.ts`), and a service, config or posture check the identity
 * roles of the service policies that grant it (`shared/policy/service-access-fan-out.ts`). Config types, whose
 * names key every service's configs, and whatever moves `#all`'s marker move the global one.
 */
export const SERVICE_ACCESS_MARKER = 'service-access';

/**
 * The marker of one identity role (`@<id>`, `#<attribute>`). `#all`'s is the global one: every identity answers to
 * `#all`, so a marker of its own would be one more item every poll reads (half a read unit) for the same answer.
 */
export function identityRoleMarker(role: string): string {
  return role === '#all' ? SERVICE_ACCESS_MARKER : `${SERVICE_ACCESS_MARKER}:${role}`;
}

/** Every marker an identity polls: the global one (`#all`'s too) and those of each role it answers to. */
export function serviceAccessMarkersOf(identity: { readonly id: string; readonly roleAttributes: readonly string[] }) {
  return [
    SERVICE_ACCESS_MARKER,
    identityRoleMarker(`@${identity.id}`),
    ...identity.roleAttributes.map((attribute) => identityRoleMarker(`#${attribute}`)),
  ];
}

/** A policy record's fields but the id (the selection items' `recordFields`). */
function recordFieldsOf(record: { readonly shape: Readonly<Record<string, unknown>> }): string[] {
  return Object.keys(record.shape).filter((field) => field !== 'id');
}

export const DIAL_BIND = ['Dial', 'Bind'] as const;
export type DialBind = (typeof DIAL_BIND)[number];

const roles = z.array(z.string());
const policyShape = {
  ...baseDocumentShape,
  name: z.string(),
  semantic: z.enum(POLICY_SEMANTICS),
};

const POLICY_FILTERABLE: FilterableFields = { ...BASE_FILTERABLE, name: 'string', semantic: 'string' };

export const servicePolicySchema = z.object({
  ...policyShape,
  type: z.enum(DIAL_BIND),
  identityRoles: roles,
  serviceRoles: roles,
  postureCheckRoles: roles,
});
export type ServicePolicy = z.infer<typeof servicePolicySchema>;
/** What a reader needs to evaluate a service policy, carried by each of its selection items. */
export const servicePolicyRecord = servicePolicySchema.pick({
  id: true,
  semantic: true,
  type: true,
  identityRoles: true,
  serviceRoles: true,
  postureCheckRoles: true,
});
export type ServicePolicyRecord = z.infer<typeof servicePolicyRecord>;

export const servicePolicies: EntityDefinition<ServicePolicy> = {
  collection: 'service-policies',
  label: 'service policy',
  schema: servicePolicySchema,
  unique: ['name'],
  sortedBy: ['name'],
  filterable: {
    ...POLICY_FILTERABLE,
    type: 'string',
    identityRoles: 'stringSet',
    serviceRoles: 'stringSet',
    postureCheckRoles: 'stringSet',
  },
  selects: {
    fields: [
      { field: 'identityRoles', collection: 'identities', plural: 'identities' },
      { field: 'serviceRoles', collection: 'services', plural: 'services' },
      { field: 'postureCheckRoles', collection: 'posture-checks', plural: 'posture checks' },
    ],
    recordOf: (doc) => servicePolicyRecord.parse(doc),
    recordFields: recordFieldsOf(servicePolicyRecord),
  },
  changeMarkers: (doc) => doc.identityRoles.map(identityRoleMarker),
  // What the routers' data models hold of the policies may change: they follow (`router-notice.ts`).
  routerNotices: servicesNotices,
};

export const edgeRouterPolicySchema = z.object({
  ...policyShape,
  identityRoles: roles,
  edgeRouterRoles: roles,
  /** The policies the controller keeps for tunneling routers' own identities; not changed by admins. */
  isSystem: z.boolean(),
});
export type EdgeRouterPolicy = z.infer<typeof edgeRouterPolicySchema>;
export const edgeRouterPolicyRecord = edgeRouterPolicySchema.pick({
  id: true,
  semantic: true,
  identityRoles: true,
  edgeRouterRoles: true,
});
export type EdgeRouterPolicyRecord = z.infer<typeof edgeRouterPolicyRecord>;

export const edgeRouterPolicies: EntityDefinition<EdgeRouterPolicy> = {
  collection: 'edge-router-policies',
  label: 'edge router policy',
  schema: edgeRouterPolicySchema,
  unique: ['name'],
  sortedBy: ['name'],
  filterable: {
    ...POLICY_FILTERABLE,
    isSystem: 'boolean',
    identityRoles: 'stringSet',
    edgeRouterRoles: 'stringSet',
  },
  selects: {
    fields: [
      { field: 'identityRoles', collection: 'identities', plural: 'identities' },
      { field: 'edgeRouterRoles', collection: 'edge-routers', plural: 'edge routers' },
    ],
    recordOf: (doc) => edgeRouterPolicyRecord.parse(doc),
    recordFields: recordFieldsOf(edgeRouterPolicyRecord),
  },
  // Which identities may use which router: what each router is sent of API sessions follows it.
  routerNotices: () => [{ kind: 'reach' }],
};

export const serviceEdgeRouterPolicySchema = z.object({
  ...policyShape,
  serviceRoles: roles,
  edgeRouterRoles: roles,
});
export type ServiceEdgeRouterPolicy = z.infer<typeof serviceEdgeRouterPolicySchema>;
export const serviceEdgeRouterPolicyRecord = serviceEdgeRouterPolicySchema.pick({
  id: true,
  semantic: true,
  serviceRoles: true,
  edgeRouterRoles: true,
});
export type ServiceEdgeRouterPolicyRecord = z.infer<typeof serviceEdgeRouterPolicyRecord>;

export const serviceEdgeRouterPolicies: EntityDefinition<ServiceEdgeRouterPolicy> = {
  collection: 'service-edge-router-policies',
  label: 'service edge router policy',
  schema: serviceEdgeRouterPolicySchema,
  unique: ['name'],
  sortedBy: ['name'],
  filterable: {
    ...POLICY_FILTERABLE,
    serviceRoles: 'stringSet',
    edgeRouterRoles: 'stringSet',
  },
  selects: {
    fields: [
      { field: 'serviceRoles', collection: 'services', plural: 'services' },
      { field: 'edgeRouterRoles', collection: 'edge-routers', plural: 'edge routers' },
    ],
    recordOf: (doc) => serviceEdgeRouterPolicyRecord.parse(doc),
    recordFields: recordFieldsOf(serviceEdgeRouterPolicyRecord),
  },
  // Which routers a service may be reached through: the endpoints' memory of dials' policies follows it
  // (`ctrl-channel/dial-cache.ts`), as tunneling routers' data models do.
  routerNotices: servicesNotices,
};

/** The entity types of the policies; `definitions.ts` lists them with the rest. */
export const POLICY_DEFINITIONS: readonly EntityDefinition<BaseDocument>[] = [
  servicePolicies,
  edgeRouterPolicies,
  serviceEdgeRouterPolicies,
] as unknown as EntityDefinition<BaseDocument>[];
