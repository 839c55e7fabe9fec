import * as z from 'zod';
import { POLICY_SEMANTICS } from '../policy/roles.ts';
import type { FilterableFields } from '../query/filterable-fields.ts';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type BaseDocument, type EntityDefinition } from './entity-definition.ts';

/**
 * The three policy kinds. Each selects entities of two or three types by role; the kit keeps their selection items
 * (`EntityDefinition.selects`), from which `shared/policy/reach.ts` answers who can reach what at read time.
 */

/** A change marker moved by every write that may change which services an identity sees or how (`lastChangeAt`). */
export const SERVICE_ACCESS_MARKER = 'service-access';

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
  },
  changeMarkers: [SERVICE_ACCESS_MARKER],
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
  },
  changeMarkers: [SERVICE_ACCESS_MARKER],
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
  },
  changeMarkers: [SERVICE_ACCESS_MARKER],
};

/** The entity types of the policies; `definitions.ts` lists them with the rest. */
export const POLICY_DEFINITIONS: readonly EntityDefinition<BaseDocument>[] = [
  servicePolicies,
  edgeRouterPolicies,
  serviceEdgeRouterPolicies,
] as unknown as EntityDefinition<BaseDocument>[];
