import { expect } from 'vitest';
import { type Api, expectMatchesSpec } from '../contract/openziti-spec.ts';
import type { HttpResponse } from './https-client.ts';

/** The operation of the OpenZiti API documents whose 400 answer the error envelope must fit. */
export interface DocumentedOperation {
  readonly api: Api;
  readonly method: string;
  readonly path: string;
}

/**
 * Asserts a request was refused as invalid: 400 `COULD_NOT_VALIDATE` in the error envelope, its cause naming `field`
 * with a reason, and, given the operation, the envelope as the API document describes that operation's 400.
 */
export function expectCouldNotValidate(response: HttpResponse, field: string, operation?: DocumentedOperation): void {
  expect(response.status, response.text).toBe(400);
  expect(response.body.error.code).toBe('COULD_NOT_VALIDATE');
  expect(response.body.error.cause.field).toBe(field);
  expect(response.body.error.cause.reason).toEqual(expect.any(String));
  if (operation) expectMatchesSpec(operation.api, operation.method, operation.path, 400, response.body);
}
