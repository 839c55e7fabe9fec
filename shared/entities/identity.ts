import * as z from 'zod';
import { appDataSchema, mapOf } from '../schemas/map-field.ts';
import { PRECEDENCES } from '../schemas/precedence.ts';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';
import { identityRoleMarker } from './policies.ts';
import { identityEndedNotices, rolesDiffer } from './router-notice.ts';

export const envInfoSchema = z.object({
  arch: z.string().optional(),
  domain: z.string().optional(),
  hostname: z.string().optional(),
  os: z.string().optional(),
  osRelease: z.string().optional(),
  osVersion: z.string().optional(),
});

export const sdkInfoSchema = z.object({
  appId: z.string().optional(),
  appVersion: z.string().optional(),
  branch: z.string().optional(),
  revision: z.string().optional(),
  type: z.string().optional(),
  version: z.string().optional(),
});

/** A data-flow trace an admin started on the identity (`PUT /identities/{id}/trace`), until it ends or is stopped. */
export const identityTracingSchema = z.object({
  traceId: z.string(),
  until: z.string(),
  channels: z.array(z.string()),
});
export type IdentityTracing = z.infer<typeof identityTracingSchema>;

export const identitySchema = z.object({
  ...baseDocumentShape,
  name: z.string(),
  typeId: z.string(),
  isAdmin: z.boolean(),
  isDefaultAdmin: z.boolean(),
  authPolicyId: z.string(),
  externalId: z.string().nullable(),
  roleAttributes: z.array(z.string()),
  appData: appDataSchema,
  defaultHostingCost: z.number().int(),
  defaultHostingPrecedence: z.enum(PRECEDENCES),
  serviceHostingCosts: mapOf(z.number().int()),
  serviceHostingPrecedences: mapOf(z.enum(PRECEDENCES)),
  disabled: z.boolean(),
  disabledAt: z.string().nullable(),
  disabledUntil: z.string().nullable(),
  /** API sessions created before this instant are dead (set by disable, kept by enable): revokes them all at once. */
  sessionsValidFrom: z.string().optional(),
  /**
   * The identity's live authenticator of each method, kept by the authenticators' own creates and deletes
   * (`authenticators.namedOn`): a session that ends with its authenticator reads these instead of the authenticator.
   * Absent on identities stored before they were kept (and after an authenticator of the method went): then the
   * authenticator is read.
   */
  updbAuthenticatorId: z.string().optional(),
  certAuthenticatorId: z.string().optional(),
  envInfo: envInfoSchema.nullable(),
  sdkInfo: sdkInfoSchema.nullable(),
  tracing: identityTracingSchema.optional(),
});
export type Identity = z.infer<typeof identitySchema>;

export const identities: EntityDefinition<Identity> = {
  collection: 'identities',
  label: 'identity',
  schema: identitySchema,
  unique: ['name', 'externalId'],
  sortedBy: ['name'],
  references: [
    { field: 'authPolicyId', collection: 'auth-policies', onTargetDelete: 'refuse' },
    { field: 'typeId', collection: 'identity-types', onTargetDelete: 'none' },
  ],
  filterable: {
    ...BASE_FILTERABLE,
    name: 'string',
    typeId: 'string',
    isAdmin: 'boolean',
    isDefaultAdmin: 'boolean',
    authPolicyId: 'string',
    externalId: 'string',
    roleAttributes: 'stringSet',
    disabled: 'boolean',
    defaultHostingCost: 'number',
    defaultHostingPrecedence: 'string',
  },
  roleAttributesField: 'roleAttributes',
  changeMarkers: (doc) => [identityRoleMarker(`@${doc.id}`)],
  // A new identity, or new role attributes, may change which routers its edge router policies let it use (and so
  // which are sent its sessions), and which service policies select it; an enable changes what the routers' data models
  // say of it (a disable's notice is its `ended`); a delete, a disable or a revocation ends its sessions (however the
  // write is made: the kit's, or a partial update's such as a lockout).
  routerNotices: (before, after) => [
    ...(after !== undefined &&
    (before === undefined || rolesDiffer(before, after) || (before.disabled && !after.disabled))
      ? [{ kind: 'reach' as const, identityId: after.id }]
      : []),
    ...identityEndedNotices(before, after),
  ],
  namesLive: [
    { field: 'updbAuthenticatorId', collection: 'authenticators' },
    { field: 'certAuthenticatorId', collection: 'authenticators' },
  ],
};

/** The fields an identity starts with; callers give the rest (id, name, timestamps, admin flags). */
export function newIdentity(
  fields: Pick<Identity, 'id' | 'name' | 'createdAt'> & Partial<Omit<Identity, 'id' | 'name' | 'createdAt'>>,
): Identity {
  return {
    updatedAt: fields.createdAt,
    tags: {},
    typeId: 'Default',
    isAdmin: false,
    isDefaultAdmin: false,
    authPolicyId: 'default',
    externalId: null,
    roleAttributes: [],
    appData: {},
    defaultHostingCost: 0,
    defaultHostingPrecedence: 'default',
    serviceHostingCosts: {},
    serviceHostingPrecedences: {},
    disabled: false,
    disabledAt: null,
    disabledUntil: null,
    envInfo: null,
    sdkInfo: null,
    ...fields,
  };
}

/** Whether the identity is disabled at `now`: indefinitely (no `disabledUntil`) or until a time not yet reached. */
export function isDisabledAt(identity: Identity, now: Date): boolean {
  if (!identity.disabled) return false;
  return identity.disabledUntil === null || Date.parse(identity.disabledUntil) > now.getTime();
}

/** The identity field that holds its live authenticator of a method (`Identity.certAuthenticatorId`). */
export const AUTHENTICATOR_FIELDS = {
  updb: 'updbAuthenticatorId',
  cert: 'certAuthenticatorId',
} as const satisfies Record<string, keyof Identity>;

/** Whether the identity's item names this authenticator as live (false when it does not keep them yet). */
export function namesLiveAuthenticator(identity: Identity, authenticatorId: string): boolean {
  return Object.values(AUTHENTICATOR_FIELDS).some((field) => identity[field] === authenticatorId);
}
