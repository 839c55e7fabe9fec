import type { Caller } from '#shared/auth/resolve-caller.ts';
import { configTypes } from '#shared/entities/config-type.ts';
import type { OperationRequest } from '#shared/http/operation.ts';
import { readAll } from '#shared/list/list-entities.ts';
import type { Deps } from '#shared/ports/deps.ts';

/** The config types whose data services' `config` shows: id to name (the key `config` uses). */
export type WantedConfigTypes = ReadonlyMap<string, string>;

/** At most this many config types are looked up per request; more name nothing further. */
const MAX_REQUESTED = 50;

/**
 * The config types a client asks for: the `configTypes` query (repeated or comma separated), else those its API
 * session asked for at login (the reference's order of precedence).
 */
export function requestedConfigTypes(request: OperationRequest, caller: Caller): readonly string[] {
  const query = (request.query.configTypes ?? []).flatMap((value) => value.split(','));
  return query.some((value) => value.trim() !== '') ? query : caller.session.configTypes;
}

/**
 * The config types named by id or name, or every type for `all`; names that match nothing are dropped, as the
 * reference drops them. One wave: each value is looked up as an id and as a name at once.
 */
export async function wantedConfigTypes(deps: Deps, values: readonly string[]): Promise<WantedConfigTypes> {
  const named = [...new Set(values.map((value) => value.trim()).filter((value) => value !== ''))];
  if (named.includes('all')) return new Map((await readAll(deps, configTypes)).map((type) => [type.id, type.name]));
  const found = await Promise.all(
    named.slice(0, MAX_REQUESTED).map(async (value): Promise<[string, string] | undefined> => {
      const [byId, idOfName] = await Promise.all([
        deps.store.get(configTypes, value),
        deps.store.findIdByUnique(configTypes, 'name', value),
      ]);
      if (byId) return [byId.doc.id, byId.doc.name];
      return idOfName === undefined ? undefined : [idOfName, value];
    }),
  );
  return new Map(found.filter((entry) => entry !== undefined));
}
