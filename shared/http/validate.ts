import type { z } from 'zod';
import { ApiError, invalidField } from '../errors/api-error.ts';

function fieldOf(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map(String).join('.');
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

// Rejected values are echoed in `cause.value` to help callers, except these: a password never comes back.
const SECRET_FIELD = /(^|\.)(password|currentPassword|token|secret|privateKey)$/i;

/**
 * Parses input with a zod schema; the first failure becomes a 400 `COULD_NOT_VALIDATE` whose cause names the field,
 * says why, and echoes the value that was sent.
 */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw new ApiError('COULD_NOT_VALIDATE');
  const path = issue.path as readonly PropertyKey[];
  const field = issue.code === 'unrecognized_keys' && issue.keys[0] ? fieldOf([...path, issue.keys[0]]) : fieldOf(path);
  const value = valueAt(input, path);
  const reason =
    issue.code === 'invalid_type' && value === undefined ? `${field} is required` : `${field}: ${issue.message}`;
  throw invalidField(field, reason, SECRET_FIELD.test(field) ? '[hidden]' : (value ?? null));
}
