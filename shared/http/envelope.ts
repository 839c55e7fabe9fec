import type { Pagination } from '../list/page-in-memory.ts';
import type { HttpResult } from './http-result.ts';

/**
 * `meta.apiVersion` and `meta.apiEnrollmentVersion`: the reference controller has always answered "0.0.1" for both
 * and clients compare against it.
 */
export const API_VERSION_META = { apiVersion: '0.0.1', apiEnrollmentVersion: '0.0.1' } as const;

/** 200 `{data, meta}`. */
export function ok(data: unknown, headers?: Record<string, string>): HttpResult {
  return { statusCode: 200, body: { data, meta: { ...API_VERSION_META } }, ...(headers ? { headers } : {}) };
}

/** 200 with an empty `data` object: the answer to updates, deletes and most actions. */
export function empty(): HttpResult {
  return ok({});
}

/** 201 `{data: {id, _links}}` for a created resource; links are relative, as the reference writes them. */
export function created(collection: string, id: string): HttpResult {
  return {
    statusCode: 201,
    body: { data: { id, _links: { self: { href: `./${collection}/${id}` } } }, meta: { ...API_VERSION_META } },
  };
}

/** 200 list envelope with pagination and the filterable fields of the listed type. */
export function list(
  data: readonly unknown[],
  pagination: Pagination,
  filterableFields: readonly string[],
): HttpResult {
  return {
    statusCode: 200,
    body: { data, meta: { ...API_VERSION_META, pagination, filterableFields } },
  };
}
