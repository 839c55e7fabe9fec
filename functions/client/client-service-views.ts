import type { Caller } from '#shared/auth/resolve-caller.ts';
import { configs } from '#shared/entities/config.ts';
import { identities } from '#shared/entities/identity.ts';
import {
  type IdentityServiceConfig,
  identityServiceConfigSchema,
  identityServiceConfigs,
} from '#shared/entities/identity-service-config.ts';
import type { ServicePolicyRecord } from '#shared/entities/policies.ts';
import { type PostureCheck, postureChecks } from '#shared/entities/posture-check.ts';
import type { Service } from '#shared/entities/service.ts';
import { SERVICE_POLICY, type ServiceGrant, selectable } from '#shared/policy/access.ts';
import { policiesSelecting, RoleResolver } from '#shared/policy/reach.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { listChildren, validChildren } from '#shared/store/children.ts';
import { count } from '#shared/store/index-queries.ts';
import {
  clientServiceView,
  type PostureCheckState,
  policyPostureQueriesView,
} from '#shared/views/client-service-view.ts';
import type { ServiceConfigMap } from '#shared/views/service-view.ts';
import { type WantedConfigTypes, wantedConfigTypes } from './config-types-wanted.ts';
import { type PostureEvaluator, postureEvaluator } from './posture-states.ts';

/**
 * What the client's views of services need to know about the caller, all read in one wave: the service policies that
 * select its identity, its service-config overrides, the config types it asked for, whether the network has any
 * posture check, and how its API session stands against posture checks.
 */
export interface CallerServiceContext {
  readonly policies: readonly ServicePolicyRecord[];
  /** The identity's overrides, by service id. */
  readonly overrides: ReadonlyMap<string, readonly IdentityServiceConfig[]>;
  readonly wanted: WantedConfigTypes;
  /** The reference shows no posture queries at all while the network has no posture check. */
  readonly postureChecksExist: boolean;
  readonly posture: PostureEvaluator;
}

/** A resolver of the roles of the caller's policies, for reads that read the entities selected (see `namedIdsExist`). */
export function clientResolver(deps: Deps): RoleResolver {
  return new RoleResolver(deps.store, { read: 'clientGrants', namedIdsExist: true });
}

/** Wave 1 of every client service read (see `CallerServiceContext`). */
export async function readCallerServiceContext(
  deps: Deps,
  caller: Caller,
  requestedTypes: readonly string[],
): Promise<CallerServiceContext> {
  const [policies, children, wanted, checkCount, posture] = await Promise.all([
    policiesSelecting(deps.store, SERVICE_POLICY, 'identities', selectable(caller.identity), 'clientGrants'),
    listChildren(deps, identities.collection, caller.identity.id, identityServiceConfigs.collection),
    wantedConfigTypes(deps, requestedTypes),
    count(deps.store, postureChecks.collection),
    postureEvaluator(deps, caller),
  ]);
  const overrides = new Map<string, IdentityServiceConfig[]>();
  for (const override of validChildren(deps, children, identityServiceConfigSchema)) {
    overrides.set(override.serviceId, [...(overrides.get(override.serviceId) ?? []), override]);
  }
  return { policies, overrides, wanted, postureChecksExist: checkCount > 0, posture };
}

/** The posture checks each of these policies names, by policy id: one wave, shared with `resolver`'s other reads. */
export async function postureCheckIdsOf(
  resolver: RoleResolver,
  context: CallerServiceContext,
  policies: readonly ServicePolicyRecord[],
): Promise<ReadonlyMap<string, readonly string[]>> {
  if (!context.postureChecksExist) return new Map();
  const named = policies.filter((policy) => policy.postureCheckRoles.length > 0);
  const ids = await Promise.all(
    named.map((policy) =>
      resolver.ids(postureChecks.collection, { roles: policy.postureCheckRoles, semantic: policy.semantic }),
    ),
  );
  return new Map(named.map((policy, i) => [policy.id, ids[i] ?? []]));
}

/** The posture checks of `postureCheckIdsOf`, by id: one wave. */
export async function readPostureChecks(
  deps: Deps,
  idsByPolicy: ReadonlyMap<string, readonly string[]>,
): Promise<ReadonlyMap<string, PostureCheck>> {
  const ids = [...new Set([...idsByPolicy.values()].flat())];
  if (ids.length === 0) return new Map();
  return new Map((await deps.store.getMany(postureChecks, ids, 'clientGrants')).map((check) => [check.id, check]));
}

/**
 * The `config` of each service: the data of its configs of the wanted types, then the identity's overrides of the
 * wanted types in their place, keyed by config type name. One wave (the configs of the whole page at once); none when
 * no config type is wanted.
 */
export async function configMaps(
  deps: Deps,
  docs: readonly Service[],
  context: CallerServiceContext,
): Promise<ReadonlyMap<string, ServiceConfigMap>> {
  const { wanted } = context;
  if (wanted.size === 0) return new Map();
  const overridesOf = (service: Service) =>
    (context.overrides.get(service.id) ?? []).filter((override) => wanted.has(override.configTypeId));
  const ids = docs.flatMap((doc) => [...doc.configs, ...overridesOf(doc).map((override) => override.configId)]);
  const found = new Map((await deps.store.getMany(configs, ids, 'clientGrants')).map((config) => [config.id, config]));
  return new Map(
    docs.map((doc) => {
      const config: Record<string, ServiceConfigMap[string]> = {};
      for (const id of doc.configs) {
        const item = found.get(id);
        const name = item && wanted.get(item.configTypeId);
        if (item && name !== undefined) config[name] = item.data;
      }
      for (const override of overridesOf(doc)) {
        const item = found.get(override.configId);
        const name = wanted.get(override.configTypeId);
        if (item && name !== undefined) config[name] = item.data;
      }
      return [doc.id, config];
    }),
  );
}

/** Everything read about a page of services, from which their client views are made without further reads. */
export interface ServicePageReads {
  readonly context: CallerServiceContext;
  readonly checkIds: ReadonlyMap<string, readonly string[]>;
  readonly checks: ReadonlyMap<string, PostureCheck>;
  readonly configs: ReadonlyMap<string, ServiceConfigMap>;
}

/** The client view of one service the caller was granted (see `clientServiceView`). */
export function clientServiceViewOf(doc: Service, grant: ServiceGrant, reads: ServicePageReads) {
  const states = new Map<string, PostureCheckState>();
  const stateOf = (check: PostureCheck) => {
    let state = states.get(check.id);
    if (!state) {
      state = reads.context.posture(check);
      states.set(check.id, state);
    }
    return state;
  };
  const postureQueries = reads.context.postureChecksExist
    ? grant.policies.map((policy) =>
        policyPostureQueriesView(
          policy,
          (reads.checkIds.get(policy.id) ?? []).flatMap((id) => {
            const check = reads.checks.get(id);
            return check ? [{ check, state: stateOf(check) }] : [];
          }),
        ),
      )
    : [];
  return clientServiceView(doc, grant.permissions, reads.configs.get(doc.id) ?? {}, postureQueries);
}
