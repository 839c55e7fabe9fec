import { CORS_PREFLIGHT_HEADERS } from '#shared/http/cors.ts';
import { resourcesOf } from '#shared/routes/resource-paths.ts';
import type { OperationGroup, Route } from '#shared/routes/route.ts';
import { type GatewayResponse, gatewayResponses } from './gateway-error-responses.ts';

/**
 * The REST API as one OpenAPI body with API Gateway's extensions, built from the route table.
 *
 * Why a body rather than `RestApi` resources and methods: each API Gateway resource and method is a CloudFormation
 * resource of its own, and the ~500 of them the full route table needs would pass CloudFormation's limit of 500 per
 * stack. The body is one property of one resource, whatever the number of routes.
 */

/** What the integration of one method is: API Gateway's `x-amazon-apigateway-integration`. */
type Integration =
  | {
      readonly type: 'aws_proxy';
      readonly httpMethod: 'POST';
      readonly uri: string;
      readonly timeoutInMillis: number;
      readonly passthroughBehavior: 'when_no_match';
    }
  | {
      readonly type: 'mock';
      readonly requestTemplates: Readonly<Record<string, string>>;
      readonly responses: Readonly<Record<string, unknown>>;
    };

export interface DefinedOperation {
  readonly parameters?: readonly unknown[];
  readonly responses: Readonly<Record<string, unknown>>;
  readonly 'x-amazon-apigateway-integration': Integration;
}

/** An OpenAPI method name (`get`), or API Gateway's catch-all for every method not named on the path. */
export type DefinedMethod = Lowercase<Route['method']> | 'options' | 'x-amazon-apigateway-any-method';

export interface RestApiDefinition {
  readonly openapi: '3.0.1';
  readonly info: { readonly title: string; readonly version: string };
  readonly paths: Readonly<Record<string, Partial<Record<DefinedMethod, DefinedOperation>>>>;
  readonly 'x-amazon-apigateway-gateway-responses': Readonly<Record<string, GatewayResponse>>;
  readonly 'x-amazon-apigateway-binary-media-types': readonly string[];
}

/**
 * Responses API Gateway passes on as bytes: a function answers them base64-encoded (`isBase64Encoded`), and the
 * gateway decodes them for a client that accepts the type (the MFA QR code).
 */
export const BINARY_MEDIA_TYPES = ['image/png'] as const;

export interface RestApiDefinitionOptions {
  readonly title: string;
  /** The Lambda integration URI (`arn:…:apigateway:…:lambda:path/…/invocations`) of a group's function. */
  readonly integrationUriOf: (group: OperationGroup) => string;
  /** How long API Gateway waits for a function (its own maximum is 29 s). */
  readonly timeoutInMillis: number;
}

const PREFLIGHT_STATUS = '204';

/** The preflight answer on every path, made by API Gateway itself: no function runs for a browser's OPTIONS. */
function preflightOperation(): DefinedOperation {
  const headerNames = Object.keys(CORS_PREFLIGHT_HEADERS);
  return {
    responses: {
      [PREFLIGHT_STATUS]: {
        description: 'CORS preflight',
        headers: Object.fromEntries(headerNames.map((name) => [name, { schema: { type: 'string' } }])),
      },
    },
    'x-amazon-apigateway-integration': {
      type: 'mock',
      requestTemplates: { 'application/json': `{ "statusCode": ${PREFLIGHT_STATUS} }` },
      responses: {
        default: {
          statusCode: PREFLIGHT_STATUS,
          // Static values are quoted: API Gateway reads an unquoted value as a mapping expression.
          responseParameters: Object.fromEntries(
            Object.entries(CORS_PREFLIGHT_HEADERS).map(([name, value]) => [
              `method.response.header.${name}`,
              `'${value}'`,
            ]),
          ),
        },
      },
    },
  };
}

/** `{id}` and `{name}` of `/identities/{id}/x/{name}`, declared so API Gateway passes them through. */
function pathParameters(resource: string): unknown[] {
  return [...resource.matchAll(/\{([^}]+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
}

/**
 * Every resource `resourcesOf` gives a route takes any method (`x-amazon-apigateway-any-method`) to the function of
 * the group that serves it: the function routes by method itself, with the same route table, and answers 405
 * METHOD_NOT_ALLOWED in the API's envelope for a method the resource lacks (API Gateway alone would answer its own
 * 403). One catch-all per resource rather than a method per route keeps the body, which sits inside the
 * CloudFormation template and its 1 MB limit, at about half the size. A resource whose routes belong to more than
 * one group names the other groups' methods explicitly; OPTIONS is API Gateway's own preflight answer.
 */
export function restApiDefinition(routes: readonly Route[], options: RestApiDefinitionOptions): RestApiDefinition {
  const proxyTo = (group: OperationGroup, resource: string): DefinedOperation => {
    const parameters = pathParameters(resource);
    return {
      ...(parameters.length > 0 ? { parameters } : {}),
      responses: {},
      'x-amazon-apigateway-integration': {
        type: 'aws_proxy',
        httpMethod: 'POST',
        uri: options.integrationUriOf(group),
        timeoutInMillis: options.timeoutInMillis,
        passthroughBehavior: 'when_no_match',
      },
    };
  };

  const groupsByResource = new Map<string, Map<Route['method'], OperationGroup>>();
  for (const route of routes) {
    for (const { resource } of resourcesOf(route)) {
      const methods = groupsByResource.get(resource) ?? new Map<Route['method'], OperationGroup>();
      if (methods.has(route.method)) throw new Error(`Two routes for ${route.method} ${resource}`);
      groupsByResource.set(resource, methods.set(route.method, route.group));
    }
  }

  const paths: Record<string, Partial<Record<DefinedMethod, DefinedOperation>>> = {};
  for (const [resource, methods] of groupsByResource) {
    const [mainGroup] = methods.values() as MapIterator<OperationGroup>;
    if (mainGroup === undefined) continue;
    const operations: Partial<Record<DefinedMethod, DefinedOperation>> = {
      'x-amazon-apigateway-any-method': proxyTo(mainGroup, resource),
      options: preflightOperation(),
    };
    for (const [method, group] of methods) {
      if (group !== mainGroup)
        operations[method.toLowerCase() as Lowercase<Route['method']>] = proxyTo(group, resource);
    }
    paths[resource] = operations;
  }
  return {
    openapi: '3.0.1',
    info: { title: options.title, version: '1' },
    paths,
    'x-amazon-apigateway-gateway-responses': gatewayResponses(),
    'x-amazon-apigateway-binary-media-types': BINARY_MEDIA_TYPES,
  };
}
