import { ERROR_CODES, type ErrorCode } from './error-codes.ts';

/** The field-level detail of a validation failure, as the reference controller reports it. */
export interface FieldCause {
  readonly field: string;
  readonly reason: string;
  readonly value: unknown;
  /** Extra detail, e.g. where in a filter the problem is. */
  readonly [detail: string]: unknown;
}

export type ErrorCause = FieldCause | { readonly message: string; readonly [key: string]: unknown };

export interface ApiErrorOptions {
  readonly message?: string;
  readonly cause?: ErrorCause;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * The one error family of the API: handlers throw it, the error mapper renders it last in the chain. The status
 * comes from the code's registry entry, never from the thrower.
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly apiCause: ErrorCause | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, options: ApiErrorOptions = {}) {
    super(options.message ?? ERROR_CODES[code].message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.apiCause = options.cause;
    this.headers = options.headers ?? {};
  }
}

/** A 400 `COULD_NOT_VALIDATE` naming the field at fault. */
export function invalidField(field: string, reason: string, value: unknown): ApiError {
  return new ApiError('COULD_NOT_VALIDATE', { cause: { field, reason, value } });
}

/** A 404 `NOT_FOUND` for an entity id. */
export function notFound(entity: string, id: string): ApiError {
  return new ApiError('NOT_FOUND', { cause: { message: `${entity} with id ${id} not found` } });
}
