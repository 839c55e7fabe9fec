import { z } from 'zod';
import type { OperationDocs } from '../http/operation.ts';
import { API_BASE_PATHS, type DocumentedApi, type Route } from '../routes/route.ts';
import { operationSummary } from './operation-summary.ts';

/**
 * The OpenAPI 3.0 document of one of our APIs, built from the route table: every route the API serves, under its
 * OpenZiti operationId, with its path parameters, the `zt-session` requirement of non-anonymous routes, the standard
 * list query of kit lists, the request body schema of kit creates and updates (zod's own JSON Schema), and the
 * envelopes it answers with. It describes this controller, not the reference's bundled documents, and is pure: the
 * same table gives the same document.
 *
 * OpenAPI 3.0 rather than the reference's Swagger 2.0 because zod writes 3.0 schemas directly (nullable fields,
 * unions); the envelopes are the reference's, so a client written against either reads the same responses.
 */
export interface OpenApiDocument {
  readonly openapi: '3.0.3';
  readonly info: {
    readonly title: string;
    readonly version: string;
    readonly description: string;
    readonly license: { readonly name: string; readonly url: string };
  };
  readonly servers: readonly { readonly url: string }[];
  readonly paths: Record<string, Record<string, OpenApiOperation>>;
  readonly components: {
    readonly securitySchemes: Record<string, unknown>;
    readonly schemas: Record<string, unknown>;
  };
}

export interface OpenApiOperation {
  readonly operationId: string;
  readonly summary: string;
  readonly tags: readonly string[];
  readonly security: readonly Record<string, readonly string[]>[];
  readonly parameters?: readonly unknown[];
  readonly requestBody?: unknown;
  readonly responses: Record<string, unknown>;
}

/** What the builder is told about each route's operation (the kit's `docs`); absent for hand-written operations. */
export type DocsLookup = (route: Route) => OperationDocs | undefined;

/** The id each API's document is known by, as the reference names them (the edge APIs' are listed at `/specs`). */
export const SPEC_IDS: Readonly<Record<DocumentedApi, string>> = {
  client: 'edge-client',
  management: 'edge-management',
  fabric: 'fabric',
};

/** Each document's title. */
const TITLES: Readonly<Record<DocumentedApi, string>> = {
  client: 'Ziti Edge Client API',
  management: 'Ziti Edge Management API',
  fabric: 'Ziti Fabric API',
};

const SECURITY_SCHEME = 'ztSession';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The shared shapes every operation's responses point at. */
const COMPONENT_SCHEMAS: Record<string, unknown> = {
  meta: {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      apiEnrollmentVersion: { type: 'string' },
      pagination: {
        type: 'object',
        properties: { limit: { type: 'integer' }, offset: { type: 'integer' }, totalCount: { type: 'integer' } },
        required: ['limit', 'offset', 'totalCount'],
      },
      filterableFields: { type: 'array', items: { type: 'string' } },
    },
  },
  envelope: {
    type: 'object',
    properties: { data: {}, meta: ref('meta') },
    required: ['data', 'meta'],
  },
  listEnvelope: {
    type: 'object',
    properties: { data: { type: 'array', items: {} }, meta: ref('meta') },
    required: ['data', 'meta'],
  },
  link: { type: 'object', properties: { href: { type: 'string' } }, required: ['href'] },
  createdEnvelope: {
    type: 'object',
    properties: {
      data: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          _links: { type: 'object', additionalProperties: ref('link') },
        },
        required: ['id', '_links'],
      },
      meta: ref('meta'),
    },
    required: ['data', 'meta'],
  },
  apiError: {
    type: 'object',
    properties: {
      code: { type: 'string' },
      message: { type: 'string' },
      requestId: { type: 'string' },
      cause: {
        type: 'object',
        properties: { field: { type: 'string' }, reason: { type: 'string' }, value: {} },
      },
    },
    required: ['code', 'message'],
  },
  apiErrorEnvelope: {
    type: 'object',
    properties: { error: ref('apiError'), meta: ref('meta') },
    required: ['error', 'meta'],
  },
};

const ERROR_DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: 'The request is not valid (`COULD_NOT_VALIDATE` names the field, `INVALID_FILTER`, ...)',
  401: 'No valid API session, or one without the rights this operation needs',
  404: 'No resource with this id',
  409: 'The resource is still referenced or in a state that refuses the change',
  429: 'Too many requests; try again later',
};

function json(schema: unknown) {
  return { 'application/json': { schema } };
}

/** `{param}` templates of a path, in order. */
export function pathParameters(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
}

/**
 * What zod writes for its `openapi-3.0` target that OpenAPI 3.0 itself does not take, said in 3.0's words:
 * - `nullable` where there is no `type` beside it (zod writes it for free-form values): 3.0 gives it a meaning only
 *   next to a type, validators refuse it alone, and a schema without a type admits null anyway; it is dropped;
 * - `contentEncoding` (JSON Schema 2019-09, OpenAPI 3.1; zod writes it for `z.base64()`): 3.0's schema object has no
 *   such field and says base64 with `format: byte`; other encodings keep zod's `format` (`base64url`).
 */
function asOpenApi30(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(asOpenApi30);
  if (value === null || typeof value !== 'object') return value;
  // A keyword's value is a boolean or a string; an object under the same key is a property named so, and stays.
  const isKeyword = (key: string, inner: unknown) =>
    (key === 'nullable' && typeof inner === 'boolean') || (key === 'contentEncoding' && typeof inner === 'string');
  const entries = Object.entries(value).filter(
    ([key, inner]) => !isKeyword(key, inner) || (key === 'nullable' && 'type' in value),
  );
  const schema = Object.fromEntries(entries.map(([key, inner]) => [key, asOpenApi30(inner)]));
  return 'contentEncoding' in value && value.contentEncoding === 'base64' ? { ...schema, format: 'byte' } : schema;
}

/** The JSON Schema (OpenAPI 3.0 dialect) of a zod schema, as it is accepted on input. */
export function bodySchema(schema: z.ZodType): unknown {
  try {
    return asOpenApi30(z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' }));
  } catch {
    // A schema zod cannot express (a custom check it has no JSON Schema for): document an object.
    return { type: 'object' };
  }
}

function listParameters(roleFilter: boolean): unknown[] {
  const query = (name: string, schema: unknown, description: string) => ({ name, in: 'query', schema, description });
  return [
    query('limit', { type: 'integer' }, 'Page size'),
    query('offset', { type: 'integer' }, 'Index of the first item'),
    query('filter', { type: 'string' }, 'A ZitiQL filter expression'),
    query('sort', { type: 'string' }, 'Sort fields, e.g. `name asc`'),
    ...(roleFilter
      ? [
          {
            name: 'roleFilter',
            in: 'query',
            schema: { type: 'array', items: { type: 'string' } },
            style: 'form',
            explode: true,
            description: 'Role attributes (`#attr`) or ids/names (`@id`)',
          },
          query(
            'roleSemantic',
            { type: 'string', enum: ['AllOf', 'AnyOf'] },
            'How `roleFilter` entries combine (any case)',
          ),
        ]
      : []),
  ];
}

function successResponse(route: Route, docs: OperationDocs | undefined): [string, unknown] {
  if (route.operation === 'detailSpecBody') {
    // The spec body is served raw, as the reference does, not enveloped.
    return [
      '200',
      {
        description: 'The document',
        content: { 'application/json': { schema: { type: 'object' } }, 'text/yaml': { schema: { type: 'string' } } },
      },
    ];
  }
  if (route.method === 'POST' && route.operation.startsWith('create')) {
    return ['201', { description: 'Created', content: json(ref('createdEnvelope')) }];
  }
  // Only kit lists are known to answer an array with pagination (`listVersion`, say, answers an object).
  return ['200', { description: 'OK', content: json(ref(docs?.list ? 'listEnvelope' : 'envelope')) }];
}

function operationObject(route: Route, docs: OperationDocs | undefined): OpenApiOperation {
  const params = pathParameters(route.path);
  const parameters = [
    ...params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
    ...(docs?.list ? listParameters(docs.list.roleFilter) : []),
    ...(docs?.query ?? []).map((parameter) => ({
      name: parameter.name,
      in: 'query',
      schema: parameter.repeated ? { type: 'array', items: { type: 'string' } } : { type: 'string' },
      ...(parameter.repeated ? { style: 'form', explode: true } : {}),
      description: parameter.description,
    })),
  ];
  const errors = new Set<number>([429]);
  if (docs?.body || docs?.list) errors.add(400);
  if (route.auth !== 'none') errors.add(401);
  if (params.length > 0) errors.add(404);
  if (route.method === 'DELETE') errors.add(409);
  const [status, success] = successResponse(route, docs);
  const responses: Record<string, unknown> = { [status]: success };
  for (const code of [...errors].sort((a, b) => a - b)) {
    responses[String(code)] = { description: ERROR_DESCRIPTIONS[code], content: json(ref('apiErrorEnvelope')) };
  }
  return {
    operationId: route.operation,
    summary: operationSummary(route),
    tags: [route.group],
    security: route.auth === 'none' ? [] : [{ [SECURITY_SCHEME]: [] }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(docs?.body ? { requestBody: { required: true, content: json(bodySchema(docs.body)) } } : {}),
    responses,
  };
}

/** The names of the component schemas `value` points at (`$ref: #/components/schemas/<name>`). */
function schemaRefsIn(value: unknown): string[] {
  return [...JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((match) => match[1]!);
}

/**
 * The shared shapes the paths point at, directly or through each other: an API that creates nothing (the fabric's,
 * read only) has no use for the created envelope, and a document listing it would carry a component nobody uses.
 */
function schemasUsedBy(paths: unknown): Record<string, unknown> {
  const used = new Set<string>();
  const pending = schemaRefsIn(paths);
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (used.has(name)) continue;
    used.add(name);
    pending.push(...schemaRefsIn(COMPONENT_SCHEMAS[name]));
  }
  return Object.fromEntries(Object.entries(COMPONENT_SCHEMAS).filter(([name]) => used.has(name)));
}

/** The document of one API from the routes it serves, in the table's order. */
export function buildOpenApi(
  api: DocumentedApi,
  routes: readonly Route[],
  docsOf: DocsLookup,
  version: string,
): OpenApiDocument {
  const paths: Record<string, Record<string, OpenApiOperation>> = {};
  for (const route of routes) {
    if (!route.apis.includes(api)) continue;
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operationObject(route, docsOf(route)) };
  }
  return {
    openapi: '3.0.3',
    info: {
      title: `${TITLES[api]} (serverless controller)`,
      version,
      description:
        'Generated from the route table of the serverless controller (`npm run openapi`). Errors are `{error: {code, message, requestId, cause}, meta}`.',
      license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
    },
    servers: [{ url: API_BASE_PATHS[api] }],
    paths,
    components: {
      securitySchemes: { [SECURITY_SCHEME]: { type: 'apiKey', in: 'header', name: 'zt-session' } },
      schemas: schemasUsedBy(paths),
    },
  };
}
