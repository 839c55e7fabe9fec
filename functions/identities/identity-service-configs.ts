import * as z from 'zod';
import { getOrNotFound } from '#shared/crud/crud-operations.ts';
import { configs } from '#shared/entities/config.ts';
import { configTypes } from '#shared/entities/config-type.ts';
import { identities } from '#shared/entities/identity.ts';
import {
  type IdentityServiceConfig,
  identityServiceConfigId,
  identityServiceConfigs,
} from '#shared/entities/identity-service-config.ts';
import { services } from '#shared/entities/service.ts';
import { invalidField, notFound } from '#shared/errors/api-error.ts';
import { empty, list } from '#shared/http/envelope.ts';
import { documented, type Operation } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { Stored } from '#shared/store/entity-store.ts';
import { referrerIds } from '#shared/store/index-queries.ts';
import { withOptimisticRetry } from '#shared/store/optimistic-retry.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { entityRef } from '#shared/views/entity-ref.ts';

/**
 * Pairs one request may associate or remove. Each override written is about eight transaction items (the override,
 * its id-order item, its filter pack, its three links and the checks of its service and config), and the whole
 * request is one transaction of at most 100.
 */
export const MAX_SERVICE_CONFIG_PAIRS = 12;
/** Overrides removed per transaction when all of an identity's go at once (six items each, with the filter pack). */
const REMOVALS_PER_TRANSACTION = 16;

const pair = z.strictObject({ serviceId: z.string().min(1).max(1000), configId: z.string().min(1).max(1000) });
const pairsSchema = z.array(pair).max(MAX_SERVICE_CONFIG_PAIRS);
type Pair = z.infer<typeof pair>;

/** An identity's overrides, read strongly consistently from the links they keep in the identity's partition. */
async function overridesOf(deps: Deps, identityId: string): Promise<Stored<IdentityServiceConfig>[]> {
  const ids = await referrerIds(
    deps.store,
    { collection: identities.collection, id: identityId },
    identityServiceConfigs.collection,
  );
  return deps.store.getManyStored(identityServiceConfigs, ids);
}

/**
 * A transaction may name an item once: the overrides of one request check their identity once (the caller adds that
 * check), and a service or config shared by several pairs once.
 */
function withoutRepeatedChecks(ops: readonly WriteOp[]): WriteOp[] {
  const checked = new Set<string>();
  return ops.filter((op) => {
    const key = op.item.ConditionCheck?.Key;
    if (!key) return true;
    const name = `${String(key.PK)}|${String(key.SK)}`;
    if (checked.has(name)) return false;
    checked.add(name);
    return true;
  });
}

/** The services and configs pairs name, read together. */
function servicesAndConfigs(deps: Deps, pairs: readonly Pair[]) {
  return Promise.all([
    deps.store.getMany(
      services,
      pairs.map((entry) => entry.serviceId),
    ),
    deps.store.getMany(
      configs,
      pairs.map((entry) => entry.configId),
    ),
  ]);
}

/** `GET /identities/{id}/service-configs`: the identity's overrides as service and config pairs. */
export const listIdentitysServiceConfigs: Operation = async (request, deps) => {
  const identity = await getOrNotFound(deps, identities, request.pathParameters.id ?? '');
  const overrides = (await overridesOf(deps, identity.doc.id)).map((entry) => entry.doc);
  const [serviceDocs, configDocs] = await servicesAndConfigs(deps, overrides);
  const serviceName = new Map(serviceDocs.map((doc) => [doc.id, doc.name]));
  const configName = new Map(configDocs.map((doc) => [doc.id, doc.name]));
  const views = overrides
    .filter((override) => serviceName.has(override.serviceId) && configName.has(override.configId))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((override) => ({
      serviceId: override.serviceId,
      service: entityRef(services.collection, override.serviceId, serviceName.get(override.serviceId) ?? ''),
      configId: override.configId,
      config: entityRef(configs.collection, override.configId, configName.get(override.configId) ?? ''),
    }));
  return list(views, { limit: -1, offset: 0, totalCount: views.length }, []);
};

/**
 * The overrides the pairs ask for, by id: each service and config must exist, the config's type must configure
 * services, and one request may give a service only one config of each type.
 */
async function requestedOverrides(deps: Deps, identityId: string, pairs: readonly Pair[], now: string) {
  const [serviceDocs, configDocs] = await servicesAndConfigs(deps, pairs);
  const missingService = pairs.find((entry) => !serviceDocs.some((doc) => doc.id === entry.serviceId));
  if (missingService) {
    throw invalidField('serviceId', `no service found with id ${missingService.serviceId}`, missingService.serviceId);
  }
  const missingConfig = pairs.find((entry) => !configDocs.some((doc) => doc.id === entry.configId));
  if (missingConfig) {
    throw invalidField('configId', `no config found with id ${missingConfig.configId}`, missingConfig.configId);
  }
  const types = await deps.store.getMany(
    configTypes,
    configDocs.map((config) => config.configTypeId),
  );
  const wanted = new Map<string, IdentityServiceConfig>();
  for (const entry of pairs) {
    const config = configDocs.find((doc) => doc.id === entry.configId)!;
    const type = types.find((doc) => doc.id === config.configTypeId);
    if (type && type.target !== 'service') {
      throw invalidField(
        'configId',
        `config ${config.name} has config type ${type.name} which does not target services`,
        entry.configId,
      );
    }
    const id = identityServiceConfigId(identityId, entry.serviceId, config.configTypeId);
    const other = wanted.get(id);
    if (other && other.configId !== entry.configId) {
      throw invalidField(
        'configId',
        `multiple service configs provided for service ${entry.serviceId} of config type ${type?.name ?? config.configTypeId}`,
        entry.configId,
      );
    }
    wanted.set(id, {
      id,
      createdAt: now,
      updatedAt: now,
      tags: {},
      identityId,
      serviceId: entry.serviceId,
      configId: entry.configId,
      configTypeId: config.configTypeId,
    });
  }
  return [...wanted.values()];
}

/**
 * `POST /identities/{id}/service-configs [{serviceId, configId}]`: the identity sees these configs instead of the
 * services' own; a config of a type the identity already overrides for that service replaces the override. One
 * transaction.
 */
export const associateIdentitysServiceConfigs = documented(
  async (request, deps) => {
    const pairs = parseWith(pairsSchema, request.body);
    const identityId = request.pathParameters.id ?? '';
    await withOptimisticRetry(async () => {
      const identity = await getOrNotFound(deps, identities, identityId);
      const now = deps.now().toISOString();
      const wanted = await requestedOverrides(deps, identity.doc.id, pairs, now);
      const existing = new Map(
        (
          await deps.store.getManyStored(
            identityServiceConfigs,
            wanted.map((override) => override.id),
          )
        ).map((stored) => [stored.doc.id, stored]),
      );
      const ops: WriteOp[] = [
        deps.store.existsOp(identities.collection, identity.doc.id, () => notFound(identities.label, identityId)),
      ];
      for (const override of wanted) {
        const before = existing.get(override.id);
        if (!before) {
          ops.push(...deps.store.createOps(identityServiceConfigs, override, ['identityId']));
        } else if (before.doc.configId !== override.configId) {
          const next = { ...before.doc, configId: override.configId, updatedAt: now };
          ops.push(...deps.store.replaceOps(identityServiceConfigs, before, next));
        }
      }
      if (ops.length > 1) await deps.store.transact(withoutRepeatedChecks(ops));
    });
    return empty();
  },
  { body: pairsSchema },
);

/**
 * `DELETE /identities/{id}/service-configs [{serviceId, configId}]`: removes the overrides of those pairs (pairs the
 * identity has no override for are no-ops). With no body or an empty list it removes all of them, as the reference
 * does; those commit in transactions of a bounded number of overrides each, so a long list of overrides is removed a
 * whole override at a time.
 */
export const disassociateIdentitysServiceConfigs = documented(
  async (request, deps) => {
    const pairs = request.body === undefined || request.body === null ? [] : parseWith(pairsSchema, request.body);
    const identityId = request.pathParameters.id ?? '';
    await withOptimisticRetry(async () => {
      const identity = await getOrNotFound(deps, identities, identityId);
      const overrides = (await overridesOf(deps, identity.doc.id)).filter(
        ({ doc }) =>
          pairs.length === 0 ||
          pairs.some((entry) => entry.serviceId === doc.serviceId && entry.configId === doc.configId),
      );
      for (let start = 0; start < overrides.length; start += REMOVALS_PER_TRANSACTION) {
        const chunk = overrides.slice(start, start + REMOVALS_PER_TRANSACTION);
        await deps.store.transact(
          chunk.flatMap((entry) => deps.store.deleteOps(identityServiceConfigs, entry.doc, entry.version)),
        );
      }
    });
    return empty();
  },
  { body: pairsSchema },
);
