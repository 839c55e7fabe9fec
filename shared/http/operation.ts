import type { ZodType } from 'zod';
import type { Caller, CallerReads } from '../auth/resolve-caller.ts';
import { ApiError } from '../errors/api-error.ts';
import type { Logger } from '../log/logger.ts';
import { onceUntilRejected } from '../once-until-rejected.ts';
import type { Deps } from '../ports/deps.ts';
import type { Api, Route } from '../routes/route.ts';
import type { HttpResult } from './http-result.ts';

/** What an operation sees of its request, already routed, size-checked, parsed and authenticated. */
export interface OperationRequest {
  readonly requestId: string;
  readonly route: Route;
  readonly api: Api;
  readonly pathParameters: Readonly<Record<string, string>>;
  /** Every query parameter with all its values (repeatable parameters such as `roleFilter`). */
  readonly query: Readonly<Record<string, readonly string[]>>;
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body; undefined when there is none or it is not JSON. */
  readonly body: unknown;
  readonly rawBody: string | undefined;
  readonly sourceIp: string;
  /** The client certificate (PEM) the TLS layer verified, as API Gateway's mTLS passes it. */
  readonly clientCertPem: string | undefined;
  readonly caller: Caller | undefined;
  readonly logger: Logger;
  /** The origin the caller reached us at, plus API Gateway's stage path when there is one. */
  readonly baseUrl: string;
}

/**
 * What an operation tells the API documents about itself (`shared/openapi/`); the CRUD kit fills it in. It is read
 * only when the documents are generated (`npm run openapi`), never while serving.
 */
export interface OperationDocs {
  /** The schema the request body is validated with. */
  readonly body?: ZodType;
  /** The operation is a list taking the standard query (`limit`, `offset`, `filter`, `sort`), and `roleFilter`/`roleSemantic` when it says so. */
  readonly list?: { readonly roleFilter: boolean };
  /** Query parameters of its own besides the list's (`configTypes` of the service lists). */
  readonly query?: readonly QueryParameterDoc[];
}

/** A query parameter an operation takes, as the API documents describe it. */
export interface QueryParameterDoc {
  readonly name: string;
  readonly description: string;
  /** Repeatable (`?configTypes=a&configTypes=b`) rather than one string. */
  readonly repeated?: boolean;
}

export type Operation = ((request: OperationRequest, deps: Deps) => Promise<HttpResult>) & {
  readonly docs?: OperationDocs;
  /** An operation of a module loaded on first use ({@link loadedOnUse}): the loaded operation, with its docs. */
  readonly load?: () => Promise<Operation>;
  /** What it asks of the read of its caller: items read in the same batch, how the session's activity is kept. */
  readonly callerReads?: CallerReads;
};

/** An operation carrying what the API documents should say about it. */
export function documented(operation: Operation, docs: OperationDocs): Operation {
  return Object.assign(operation, { docs });
}

/** An operation group's operations, by the route table's operation name. */
export type OperationMap = Readonly<Record<string, Operation>>;

/**
 * Operations whose module is imported with the first request to any of them (`await import()`), not with the
 * function: a cold start then reads only the modules its first request uses. `names` are the route table's names of
 * the operations the loaded map holds; the API documents' generator loads the module for their docs.
 */
export function loadedOnUse(names: readonly string[], load: () => Promise<object>): OperationMap {
  const loaded = onceUntilRejected(load);
  const operationNamed = async (name: string): Promise<Operation> => {
    const operation = ((await loaded()) as Record<string, unknown>)[name];
    if (typeof operation !== 'function') throw new Error(`the loaded module has no operation ${name}`);
    return operation as Operation;
  };
  return Object.fromEntries(
    names.map((name) => {
      const operation = async (request: OperationRequest, deps: Deps) => (await operationNamed(name))(request, deps);
      return [name, Object.assign(operation, { load: () => operationNamed(name) })];
    }),
  );
}

/** The caller of a route whose auth level guarantees one. */
export function callerOf(request: OperationRequest): Caller {
  if (!request.caller) throw new ApiError('UNAUTHORIZED');
  return request.caller;
}

/** The first value of a query parameter. */
export function queryValue(request: OperationRequest, name: string): string | undefined {
  return request.query[name]?.[0];
}
