import { type Config, configs } from '#shared/entities/config.ts';
import { configTypes } from '#shared/entities/config-type.ts';
import type { Identity } from '#shared/entities/identity.ts';
import { identityServiceConfigSchema, identityServiceConfigs } from '#shared/entities/identity-service-config.ts';
import { servicePolicies } from '#shared/entities/policies.ts';
import { type PostureCheck, postureChecks } from '#shared/entities/posture-check.ts';
import { type Service, services } from '#shared/entities/service.ts';
import { SERVICE_POLICY, selectable } from '#shared/policy/access.ts';
import { policiesSelecting, RoleResolver } from '#shared/policy/reach.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { listChildren, validChildren } from '#shared/store/children.ts';

/** One event of the tunneler's part of a DataState (`edge.DataEvent`), as a full state lists them: a create. */
export type TunnelerEvent = { readonly action: 'Create' } & (
  | { readonly configType: object }
  | { readonly config: object }
  | { readonly service: object }
  | { readonly postureCheck: object }
  | { readonly servicePolicy: object }
  | { readonly servicePolicyChange: object }
);

/**
 * What a tunneling router's data model holds beyond a plain edge router's, for its own identity (the reference's
 * router identity, `router-identity.ts`): the service policies that select that identity (Bind to host, Dial to
 * intercept), with the services and posture checks each selects, the services with their configs and the configs'
 * types, and the identity's own overrides of those services' configs. Events are in the order the router applies a
 * full state (`getDataStateAlreadyLocked`): what the identity's overrides and the services name comes before them,
 * each policy before its related entities, and the identity (given apart, see `identityServiceConfigs`) between
 * the configs and the services.
 *
 * Only the router identity's policies, and it alone as their related identity: the SDKs' API sessions are legacy
 * ones, whose access the router leaves to the controller, and a router compares each identity's services before and
 * after every model change and closes what it finds lost. SDK identities, related to no policy here, never lose one.
 */
export interface TunnelerModel {
  /** Config types and configs: before the identities (the router identity's overrides name configs). */
  readonly configEvents: readonly TunnelerEvent[];
  /** Services, posture checks, then each policy followed by its services, posture checks and identity. */
  readonly policyEvents: readonly TunnelerEvent[];
  /** The router identity's overrides (`DataIdentity.serviceConfigs`): service id → config type id → config id. */
  readonly identityServiceConfigs: Readonly<Record<string, { configs: Record<string, string> }>>;
  readonly services: number;
  readonly servicePolicies: number;
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

/**
 * The tunneler's part of a router's data model (see {@link TunnelerModel}), read as a client's grants are (eventually
 * consistent: a change reaches the router by a notice, read again once its indexes have settled). Five waves: the
 * identity's policies and overrides, what the policies select (and their names), the services and posture checks, the
 * configs, their types.
 */
export async function tunnelerModel(deps: Deps, identity: Identity): Promise<TunnelerModel> {
  const [policies, children] = await Promise.all([
    policiesSelecting(deps.store, SERVICE_POLICY, 'identities', selectable(identity), 'clientGrants'),
    listChildren(deps, 'identities', identity.id, identityServiceConfigs.collection),
  ]);
  // The selected entities are read next, and those not found dropped: a policy's `@id` needs no read of its own.
  const resolver = new RoleResolver(deps.store, { read: 'clientGrants', namedIdsExist: true });
  const [serviceIds, checkIds, named] = await Promise.all([
    Promise.all(
      policies.map((policy) =>
        resolver.ids(services.collection, { roles: policy.serviceRoles, semantic: policy.semantic }),
      ),
    ),
    Promise.all(
      policies.map((policy) =>
        policy.postureCheckRoles.length === 0
          ? Promise.resolve([])
          : resolver.ids(postureChecks.collection, { roles: policy.postureCheckRoles, semantic: policy.semantic }),
      ),
    ),
    deps.store.getMany(
      servicePolicies,
      policies.map((policy) => policy.id),
      'clientGrants',
    ),
  ]);
  const [serviceDocs, checkDocs] = await Promise.all([
    deps.store.getMany(services, [...new Set(serviceIds.flat())], 'clientGrants'),
    deps.store.getMany(postureChecks, [...new Set(checkIds.flat())], 'clientGrants'),
  ]);
  const servicesById = byId(serviceDocs);
  const checksById = byId(checkDocs);
  const policyNames = new Map(named.map((policy) => [policy.id, policy.name]));

  // The overrides of the services in the model only: the others' configs would be sent for nothing.
  const overrides = validChildren(deps, children, identityServiceConfigSchema).filter((override) =>
    servicesById.has(override.serviceId),
  );
  const configDocs = await deps.store.getMany(
    configs,
    [...new Set([...serviceDocs.flatMap((service) => service.configs), ...overrides.map((o) => o.configId)])],
    'clientGrants',
  );
  const typeDocs = await deps.store.getMany(
    configTypes,
    [...new Set(configDocs.map((config) => config.configTypeId))],
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

  // A policy no longer stored (deleted since its selection was read) is left out with what it relates to.
  const sentPolicies = policies.flatMap((policy, index) => {
    const name = policyNames.get(policy.id);
    if (name === undefined) return [];
    return [
      {
        policy,
        name,
        serviceIds: (serviceIds[index] ?? []).filter((id) => servicesById.has(id)),
        checkIds: (checkIds[index] ?? []).filter((id) => checksById.has(id)),
      },
    ];
  });
  const create = <E extends object>(model: E) => ({ action: 'Create' as const, ...model });
  return {
    configEvents: [
      ...typeDocs.map((type) => create({ configType: { id: type.id, name: type.name } })),
      ...sentConfigs.map((config) => create({ config: configEventOf(config) })),
    ],
    policyEvents: [
      ...serviceDocs.map((service) => create({ service: serviceEventOf(service, configIds) })),
      ...checkDocs.map((check) => create({ postureCheck: postureCheckOf(check) })),
      ...sentPolicies.flatMap(({ policy, name, serviceIds: related, checkIds: checks }) => [
        create({ servicePolicy: { id: policy.id, name, policyType: POLICY_TYPE[policy.type] } }),
        create({ servicePolicyChange: changeOf(policy.id, related, 'RelatedService') }),
        create({ servicePolicyChange: changeOf(policy.id, checks, 'RelatedPostureCheck') }),
        create({ servicePolicyChange: changeOf(policy.id, [identity.id], 'RelatedIdentity') }),
      ]),
    ],
    identityServiceConfigs: overridden,
    services: serviceDocs.length,
    servicePolicies: sentPolicies.length,
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
