import { ApiError } from '../errors/api-error.ts';
import type { BoolExpr, ParsedFilter, SortField } from '../query/filter-ast.ts';
import { FilterError } from '../query/filter-error.ts';
import type { FilterableFields } from '../query/filterable-fields.ts';
import { resolveAliases, resolveSortAliases } from '../query/resolve-aliases.ts';

/** The filter and sort language, loaded by the first request that names either (`list-query-language.ts`). */
const queryLanguage = () => import('../query/list-query-language.ts');

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 500;
export const MAX_OFFSET = 100_000;

export type RoleSemantic = 'AllOf' | 'AnyOf';
/** Distinct `roleFilter` entries a list takes: each `#attribute` is a read of its index partition. */
export const MAX_ROLE_FILTER_ENTRIES = 100;

/** A list request, normalised: the filter's own `sort by`/`skip`/`limit` win over the query parameters. */
export interface ListParams {
  readonly limit: number;
  readonly offset: number;
  readonly where: BoolExpr | undefined;
  readonly sort: readonly SortField[];
  readonly roleFilter: { readonly roles: readonly string[]; readonly semantic: RoleSemantic } | undefined;
}

function integerParam(name: 'limit' | 'offset', value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^-?\d+$/.test(value.trim())) {
    throw new ApiError('INVALID_PAGINATION', { cause: { field: name, reason: `${name} must be an integer`, value } });
  }
  return Number(value);
}

/** The reference's limits: 0 or below -1 means the default, anything above 500 is clamped (so is -1, "no limit"). */
function clampLimit(limit: number | 'none' | undefined): number {
  if (limit === undefined) return DEFAULT_LIMIT;
  if (limit === 'none' || limit === -1) return MAX_LIMIT;
  if (limit <= 0) return DEFAULT_LIMIT;
  return Math.min(limit, MAX_LIMIT);
}

function clampOffset(offset: number | undefined): number {
  return Math.min(Math.max(offset ?? 0, 0), MAX_OFFSET);
}

function invalidFilter(error: FilterError, parameter: string, text: string): ApiError {
  return new ApiError('INVALID_FILTER', {
    message: `The ${parameter} is invalid: ${error.message}.`,
    cause: {
      field: parameter,
      reason: error.message,
      value: text,
      position: error.position,
      line: error.line,
      column: error.column,
    },
  });
}

/**
 * Reads `limit`, `offset`, `sort`, `filter` and (where the list takes them) `roleFilter`/`roleSemantic`, validating
 * the filter and sort against the type's filterable fields. Bad input is a 400 that points at the problem. The
 * result names stored fields only: aliases (`FieldAlias`) are validated as written, then resolved.
 */
export async function parseListParams(
  query: Readonly<Record<string, readonly string[]>>,
  fields: FilterableFields,
  options: { readonly roleFilter: boolean } = { roleFilter: false },
): Promise<ListParams> {
  const limitParam = integerParam('limit', query.limit?.[0]);
  const offsetParam = integerParam('offset', query.offset?.[0]);

  const filterText = query.filter?.[0]?.trim() ?? '';
  let filter: ParsedFilter | undefined;
  if (filterText !== '') {
    const { parseFilter, validateFilter } = await queryLanguage();
    try {
      filter = parseFilter(filterText);
      validateFilter(filter, fields);
    } catch (error) {
      if (error instanceof FilterError) throw invalidFilter(error, 'filter', filterText);
      throw error;
    }
  }

  let sort: readonly SortField[] = filter?.sort ?? [];
  const sortText = query.sort?.[0]?.trim() ?? '';
  if (sort.length === 0 && sortText !== '') {
    const { parseSort, validateSort } = await queryLanguage();
    try {
      sort = parseSort(sortText);
      validateSort(sort, fields, sortText);
    } catch (error) {
      if (error instanceof FilterError) {
        throw new ApiError('INVALID_SORT_IDENTIFIER', {
          cause: { field: 'sort', reason: error.message, value: sortText },
        });
      }
      throw error;
    }
  }

  return {
    limit: clampLimit(filter?.limit ?? limitParam),
    offset: clampOffset(filter?.skip ?? offsetParam),
    where: filter?.where && resolveAliases(filter.where, fields),
    sort: resolveSortAliases(sort, fields),
    roleFilter: options.roleFilter ? roleFilterOf(query) : undefined,
  };
}

function roleFilterOf(query: Readonly<Record<string, readonly string[]>>): ListParams['roleFilter'] {
  const roles = [
    ...new Set(
      (query.roleFilter ?? [])
        .flatMap((value) => value.split(','))
        .map((role) => role.trim())
        .filter(Boolean),
    ),
  ];
  if (roles.length > MAX_ROLE_FILTER_ENTRIES) {
    throw new ApiError('COULD_NOT_VALIDATE', {
      cause: {
        field: 'roleFilter',
        reason: `at most ${MAX_ROLE_FILTER_ENTRIES} distinct roles may be given; ${roles.length} were`,
        value: roles.length,
      },
    });
  }
  const semanticText = query.roleSemantic?.[0];
  let semantic: RoleSemantic = 'AllOf';
  if (semanticText !== undefined && semanticText !== '') {
    const match = (['AllOf', 'AnyOf'] as const).find((value) => value.toLowerCase() === semanticText.toLowerCase());
    if (!match) {
      throw new ApiError('COULD_NOT_VALIDATE', {
        cause: { field: 'roleSemantic', reason: 'roleSemantic must be AllOf or AnyOf', value: semanticText },
      });
    }
    semantic = match;
  }
  for (const role of roles) {
    if (!role.startsWith('#') && !role.startsWith('@')) {
      throw new ApiError('COULD_NOT_VALIDATE', {
        cause: {
          field: 'roleFilter',
          reason: 'role entries must be prefixed with # (a role attribute) or @ (an id)',
          value: role,
        },
      });
    }
  }
  return roles.length > 0 ? { roles, semantic } : undefined;
}
