import { configs } from '#shared/entities/config.ts';
import { configTypes } from '#shared/entities/config-type.ts';
import type { Service } from '#shared/entities/service.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { nameLookup } from '#shared/views/name-lookup.ts';
import { type ServiceConfigMap, serviceView } from '#shared/views/service-view.ts';

/** The config types a caller asked to see in services' `config`: ids, or every type. */
export type WantedConfigTypes = ReadonlySet<string> | 'all';

/** At most this many config types are looked up per request; more name nothing further. */
const MAX_REQUESTED = 50;

/**
 * The config types named by id or name (`all`: every one), as the reference maps them: names that match nothing are
 * dropped.
 */
export async function resolveConfigTypes(deps: Deps, values: readonly string[]): Promise<WantedConfigTypes> {
  const named = [...new Set(values.map((value) => value.trim()).filter((value) => value !== ''))];
  if (named.includes('all')) return 'all';
  const ids = await Promise.all(
    named.slice(0, MAX_REQUESTED).map(async (value) => {
      const byId = await deps.store.get(configTypes, value);
      return byId ? byId.doc.id : deps.store.findIdByUnique(configTypes, 'name', value);
    }),
  );
  return new Set(ids.filter((id): id is string => id !== undefined));
}

/**
 * The views of a page of services, each with the data of its configs of the wanted types under the type's name. The
 * page's configs are read at once, and each config type's name once.
 */
export async function serviceViewPage(
  deps: Deps,
  docs: readonly Service[],
  wanted: WantedConfigTypes,
): Promise<unknown[]> {
  if (wanted !== 'all' && wanted.size === 0) return docs.map((doc) => serviceView(doc));
  const found = await deps.store.getMany(
    configs,
    docs.flatMap((doc) => doc.configs),
  );
  const byId = new Map(found.map((config) => [config.id, config]));
  const typeName = nameLookup(deps, configTypes);
  return Promise.all(
    docs.map(async (doc) => {
      const config: Record<string, ServiceConfigMap[string]> = {};
      for (const id of doc.configs) {
        const item = byId.get(id);
        if (!item || (wanted !== 'all' && !wanted.has(item.configTypeId))) continue;
        config[await typeName(item.configTypeId)] = item.data;
      }
      return serviceView(doc, config);
    }),
  );
}

/**
 * A service's configs must exist, configure services, and be of distinct config types: 400 on `configs` otherwise.
 * (The write itself checks again that each still exists, and links them so they cannot be deleted while the service
 * uses them.)
 */
export async function checkServiceConfigs(deps: Deps, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const found = await deps.store.getMany(configs, ids);
  const missing = ids.find((id) => !found.some((config) => config.id === id));
  if (missing !== undefined) throw invalidField('configs', `no config found with id ${missing}`, ids);
  const types = await deps.store.getMany(
    configTypes,
    found.map((config) => config.configTypeId),
  );
  const byType = new Map<string, string>();
  for (const config of found) {
    const type = types.find((candidate) => candidate.id === config.configTypeId);
    if (type && type.target !== 'service') {
      throw invalidField(
        'configs',
        `config ${config.name} has config type ${type.name} which does not target services`,
        ids,
      );
    }
    const other = byType.get(config.configTypeId);
    if (other !== undefined) {
      throw invalidField(
        'configs',
        `duplicate configs named ${other} and ${config.name} found for config type ${type?.name ?? config.configTypeId}. Only one config of a given type is allowed per service`,
        ids,
      );
    }
    byType.set(config.configTypeId, config.name);
  }
  if (ids.length !== found.length) throw invalidField('configs', 'a config is named more than once', ids);
}
