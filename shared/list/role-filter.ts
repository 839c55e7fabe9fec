import type { RoleSemantic } from './list-params.ts';

/**
 * Whether an entity is selected by roles, as the reference evaluates a list's `roleFilter`: `@id` entries are always
 * unioned in; `#attribute` entries need all (AllOf) or any (AnyOf) of them among the entity's attributes. Here
 * `#all` is an ordinary attribute name, as it is for the reference's list filters (policies treat it specially).
 */
export function matchesRoles(
  id: string,
  attributes: readonly string[],
  roles: readonly string[],
  semantic: RoleSemantic,
): boolean {
  const ids = roles.filter((role) => role.startsWith('@')).map((role) => role.slice(1));
  if (ids.includes(id)) return true;
  const wanted = roles.filter((role) => role.startsWith('#')).map((role) => role.slice(1));
  if (wanted.length === 0) return false;
  const own = new Set(attributes);
  return semantic === 'AllOf' ? wanted.every((role) => own.has(role)) : wanted.some((role) => own.has(role));
}
