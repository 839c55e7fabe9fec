import * as z from 'zod';
import { type Config, configs } from '#shared/entities/config.ts';
import { configTypes } from '#shared/entities/config-type.ts';
import type { Identity } from '#shared/entities/identity.ts';
import { identityServiceConfigSchema, identityServiceConfigs } from '#shared/entities/identity-service-config.ts';
import { type ServicePolicyRecord, servicePolicies, servicePolicyRecord } from '#shared/entities/policies.ts';
import { type PostureCheck, postureChecks } from '#shared/entities/posture-check.ts';
import { type Service, services } from '#shared/entities/service.ts';
import { RoleResolver, type Selectable } from '#shared/policy/reach.ts';
import { parseRoles } from '#shared/policy/roles.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { listChildren, validChildren } from '#shared/store/children.ts';
import { idOrderRecords } from '#shared/store/index-queries.ts';

/** One event of the policy part of a DataState (`edge.DataEvent`), as a full state lists them: a create. */
export type PolicyEvent = { readonly action: 'Create' } & (
  | { readonly configType: object }
  | { readonly config: object }
  | { readonly service: object }
  | { readonly postureCheck: object }
  | { readonly servicePolicy: object }
  | { readonly servicePolicyChange: object }
);

/** Whose grants a router's model holds. */
export interface PolicySubjects {
  /** The identities whose service policies are sent (those of the router's reach, and its own when it tunnels). */
  readonly identities: readonly Selectable[];
  /** A tunneling router's own identity (`router-identity.ts`): its services' configs and its overrides are sent too. */
  readonly tunneler?: Identity;
}

/** The policy events of some of the subjects, and what they hold. */
export interface PolicyPart {
  /** Services, posture checks, then each policy followed by its services, posture checks and identities. */
  readonly events: readonly PolicyEvent[];
  readonly services: number;
  readonly servicePolicies: number;
  readonly postureChecks: number;
}

/**
 * What a router's data model holds of service policies (the reference sends them to every router, which checks an
 * OIDC session's Dial and Bind against them and closes what an identity loses): the service policies that select any
 * of the subjects, each with the services and posture checks it selects and the subjects it selects; the services and
 * posture checks; and for a tunneling router's own identity also the configs of its services with their types, and
 * its own overrides of those services' configs. Events are in the order the router applies a full state
 * (`getDataStateAlreadyLocked`): what the tunneler's overrides and the services name comes before them, each policy
 * before its related entities, and the identities (given apart) between the configs and the services.
 */
export interface PolicyModel {
  /** Config types and configs of the tunneler's services: before the identities (its overrides name configs). */
  readonly configEvents: readonly PolicyEvent[];
  /** The tunneler's overrides (`DataIdentity.serviceConfigs`): service id → config type id → config id. */
  readonly identityServiceConfigs: Readonly<Record<string, { configs: Record<string, string> }>>;
  /** Every subject's grants, each policy related to every subject it selects. */
  readonly whole: PolicyPart;
  /** The tunneler's own grants alone, each policy related to it only (none for a router that does not tunnel). */
  readonly tunnelerOnly?: PolicyPart;
}

const POLICY_TYPE = { Dial: 'DialPolicy', Bind: 'BindPolicy' } as const;

/** A posture check as the reference's data model carries it (`DataState.PostureCheck`: its type's subtype). */
function postureCheckOf(check: PostureCheck): object {
  const common = { id: check.id, name: check.name, typeId: check.typeId };
  switch (check.typeId) {
    case 'MAC':
      return { ...common, mac: { macAddresses: check.macAddresses } };
    case 'MFA':
      return {
        ...common,
        mfa: {
          timeoutSeconds: check.timeoutSeconds,
          promptOnWake: check.promptOnWake,
          promptOnUnlock: check.promptOnUnlock,
          ignoreLegacyEndpoints: check.ignoreLegacyEndpoints,
        },
      };
    case 'OS':
      return {
        ...common,
        osList: { osList: check.operatingSystems.map((os) => ({ osType: os.type, osVersions: os.versions })) },
      };
    case 'DOMAIN':
      return { ...common, domains: { domains: check.domains } };
    case 'PROCESS': {
      const { osType, path, hashes, signerFingerprint } = check.process;
      return { ...common, process: { osType, path, hashes, fingerprints: [signerFingerprint] } };
    }
    case 'PROCESS_MULTI':
      return {
        ...common,
        processMulti: {
          semantic: check.semantic,
          processes: check.processes.map(({ osType, path, hashes, signerFingerprints }) => ({
            osType,
            path,
            hashes,
            fingerprints: signerFingerprints,
          })),
        },
      };
  }
}

const byId = <T extends { readonly id: string }>(list: readonly T[]) => new Map(list.map((item) => [item.id, item]));
const sortedUnique = (ids: readonly string[]) => [...new Set(ids)].sort();

/** A service policy as the model needs it: its evaluation record and its name. */
const namedPolicyRecord = servicePolicyRecord.extend({ name: z.string() });
type NamedPolicy = z.infer<typeof namedPolicyRecord>;

/**
 * Every service policy, in id order, from the small records its id partition keeps (`filter-records.ts`: its roles,
 * type, semantic and name), one query however many identities the model is for; a record that does not parse (of a
 * layout a later build changed) is read from its policy instead.
 */
async function servicePoliciesOf(deps: Deps): Promise<NamedPolicy[]> {
  const records = await idOrderRecords(deps.store, servicePolicies.collection, 'clientGrants');
  const parsed = records.map((record) => namedPolicyRecord.safeParse(record));
  const unreadable = records.flatMap((record, index) => (parsed[index]?.success ? [] : [String(record.id)]));
  const read = unreadable.length > 0 ? await deps.store.getMany(servicePolicies, unreadable, 'clientGrants') : [];
  return [
    ...parsed.flatMap((result) => (result.success ? [result.data] : [])),
    ...read.map((policy) => namedPolicyRecord.parse(policy)),
  ].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * The subjects by id and by attribute, so the subjects a policy's identity roles select are found by the reference's
 * rule (`selectsEntity`) without a pass over all of them per policy.
 */
class SubjectIndex {
  private readonly ids: readonly string[];
  private readonly attributesOf = new Map<string, ReadonlySet<string>>();
  private readonly holders = new Map<string, string[]>();

  constructor(subjects: readonly Selectable[]) {
    for (const subject of subjects) {
      this.attributesOf.set(subject.id, new Set(subject.attributes));
      for (const attribute of subject.attributes) {
        const holders = this.holders.get(attribute) ?? [];
        holders.push(subject.id);
        this.holders.set(attribute, holders);
      }
    }
    this.ids = [...this.attributesOf.keys()].sort();
  }

  /** The subjects a policy's identity roles select, sorted. */
  selected(policy: Pick<ServicePolicyRecord, 'identityRoles' | 'semantic'>): string[] {
    const { all, ids, attributes } = parseRoles(policy.identityRoles);
    if (all) return [...this.ids];
    const selected = new Set(ids.filter((id) => this.attributesOf.has(id)));
    const [first, ...rest] = attributes;
    if (first !== undefined && policy.semantic === 'AllOf') {
      for (const id of this.holders.get(first) ?? []) {
        if (rest.every((attribute) => this.attributesOf.get(id)?.has(attribute))) selected.add(id);
      }
    } else for (const attribute of attributes) for (const id of this.holders.get(attribute) ?? []) selected.add(id);
    return [...selected].sort();
  }
}

const create = <E extends object>(model: E) => ({ action: 'Create' as const, ...model });

const EMPTY_MODEL: PolicyModel = {
  configEvents: [],
  identityServiceConfigs: {},
  whole: { events: [], services: 0, servicePolicies: 0, postureChecks: 0 },
};

/** A policy the model sends, with what it relates to. */
interface RelatedPolicy {
  readonly policy: NamedPolicy;
  readonly identityIds: readonly string[];
  readonly serviceIds: readonly string[];
  readonly checkIds: readonly string[];
}

/**
 * The policy part of a router's data model (see {@link PolicyModel}), read as a client's grants are (eventually
 * consistent: a change reaches the router by a notice, read again once its indexes have settled). Five waves: every
 * service policy (and the tunneler's overrides), what the policies that select a subject select, the services and
 * posture checks, the tunneler's configs, their types.
 */
export async function policyModel(deps: Deps, subjects: PolicySubjects): Promise<PolicyModel> {
  const { tunneler } = subjects;
  // A router no identity may use (a transit router, one outside every edge router policy) reads no policy.
  if (subjects.identities.length === 0) return EMPTY_MODEL;
  const index = new SubjectIndex(subjects.identities);
  const [policies, children] = await Promise.all([
    servicePoliciesOf(deps),
    tunneler ? listChildren(deps, 'identities', tunneler.id, identityServiceConfigs.collection) : Promise.resolve([]),
  ]);
  const selecting = policies.flatMap((policy) => {
    const identityIds = index.selected(policy);
    return identityIds.length > 0 ? [{ policy, identityIds }] : [];
  });
  // The selected entities are read next, and those not found dropped: a policy's `@id` needs no read of its own.
  const resolver = new RoleResolver(deps.store, { read: 'clientGrants', namedIdsExist: true });
  const [serviceIds, checkIds] = await Promise.all([
    Promise.all(
      selecting.map(({ policy }) =>
        resolver.ids(services.collection, { roles: policy.serviceRoles, semantic: policy.semantic }),
      ),
    ),
    Promise.all(
      selecting.map(({ policy }) =>
        policy.postureCheckRoles.length === 0
          ? Promise.resolve([])
          : resolver.ids(postureChecks.collection, { roles: policy.postureCheckRoles, semantic: policy.semantic }),
      ),
    ),
  ]);
  const [serviceDocs, checkDocs] = await Promise.all([
    deps.store.getMany(services, sortedUnique(serviceIds.flat()), 'clientGrants'),
    deps.store.getMany(postureChecks, sortedUnique(checkIds.flat()), 'clientGrants'),
  ]);
  const servicesById = byId(serviceDocs);
  const checksById = byId(checkDocs);
  const related: RelatedPolicy[] = selecting.map(({ policy, identityIds }, index) => ({
    policy,
    identityIds,
    serviceIds: (serviceIds[index] ?? []).filter((id) => servicesById.has(id)),
    checkIds: (checkIds[index] ?? []).filter((id) => checksById.has(id)),
  }));

  // The tunneler's own policies, related to it alone: what it hosts and intercepts, and whose configs it needs.
  const own: RelatedPolicy[] = tunneler
    ? related.flatMap((entry) =>
        entry.identityIds.includes(tunneler.id) ? [{ ...entry, identityIds: [tunneler.id] }] : [],
      )
    : [];
  const ownServices = new Set(own.flatMap((entry) => entry.serviceIds));
  // The overrides of the tunneler's services only: the others' configs would be sent for nothing.
  const overrides = validChildren(deps, children, identityServiceConfigSchema).filter((override) =>
    ownServices.has(override.serviceId),
  );
  const configDocs = await deps.store.getMany(
    configs,
    sortedUnique([
      ...[...ownServices].flatMap((id) => servicesById.get(id)?.configs ?? []),
      ...overrides.map((override) => override.configId),
    ]),
    'clientGrants',
  );
  const typeDocs = await deps.store.getMany(
    configTypes,
    sortedUnique(configDocs.map((config) => config.configTypeId)),
    'clientGrants',
  );
  // What the router is told of must be whole: a config whose type is gone (it cannot be, while configs refuse its
  // delete) is left out, as a service's config that is gone is.
  const typeIds = new Set(typeDocs.map((type) => type.id));
  const sentConfigs = configDocs.filter((config) => typeIds.has(config.configTypeId));
  const configIds = new Set(sentConfigs.map((config) => config.id));

  const overridden: Record<string, { configs: Record<string, string> }> = {};
  for (const override of overrides) {
    if (!configIds.has(override.configId)) continue;
    const entry = overridden[override.serviceId] ?? { configs: {} };
    entry.configs[override.configTypeId] = override.configId;
    overridden[override.serviceId] = entry;
  }

  const part = (sent: readonly RelatedPolicy[]): PolicyPart => {
    const partServices = sortedUnique(sent.flatMap((entry) => entry.serviceIds)).flatMap(
      (id) => servicesById.get(id) ?? [],
    );
    const partChecks = sortedUnique(sent.flatMap((entry) => entry.checkIds)).flatMap((id) => checksById.get(id) ?? []);
    return {
      events: [
        ...partServices.map((service) => create({ service: serviceEventOf(service, configIds) })),
        ...partChecks.map((check) => create({ postureCheck: postureCheckOf(check) })),
        ...sent.flatMap(({ policy, identityIds, serviceIds: relatedServices, checkIds: relatedChecks }) => [
          create({ servicePolicy: { id: policy.id, name: policy.name, policyType: POLICY_TYPE[policy.type] } }),
          create({ servicePolicyChange: changeOf(policy.id, relatedServices, 'RelatedService') }),
          create({ servicePolicyChange: changeOf(policy.id, relatedChecks, 'RelatedPostureCheck') }),
          create({ servicePolicyChange: changeOf(policy.id, identityIds, 'RelatedIdentity') }),
        ]),
      ],
      services: partServices.length,
      servicePolicies: sent.length,
      postureChecks: partChecks.length,
    };
  };
  return {
    configEvents: [
      ...typeDocs.map((type) => create({ configType: { id: type.id, name: type.name } })),
      ...sentConfigs.map((config) => create({ config: configEventOf(config) })),
    ],
    identityServiceConfigs: overridden,
    whole: part(related),
    ...(tunneler ? { tunnelerOnly: part(own) } : {}),
  };
}

function changeOf(policyId: string, relatedEntityIds: readonly string[], relatedEntityType: string) {
  return { policyId, relatedEntityIds, relatedEntityType, add: true };
}

function configEventOf(config: Config) {
  return { id: config.id, typeId: config.configTypeId, name: config.name, dataJson: JSON.stringify(config.data) };
}

function serviceEventOf(service: Service, sentConfigs: ReadonlySet<string>) {
  return {
    id: service.id,
    name: service.name,
    encryptionRequired: service.encryptionRequired,
    configs: service.configs.filter((id) => sentConfigs.has(id)),
  };
}
