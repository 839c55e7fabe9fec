import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ApiError } from '../../errors/api-error.ts';
import { resourcesOf } from '../../routes/resource-paths.ts';
import type { Api, Route } from '../../routes/route.ts';
import type { ControllerContext } from './controller-context.ts';

export type RouteIndex = ReadonlyMap<string, { readonly route: Route; readonly api: Api }>;

/** The resource template of an index key (`GET /identities/{id}` → `/identities/{id}`). */
function resourceOfKey(key: string): string {
  return key.slice(key.indexOf(' ') + 1);
}

/** Indexes routes by `METHOD resource-template`, the pair API Gateway puts in every proxy event. */
export function indexRoutes(routes: readonly Route[]): RouteIndex {
  const index = new Map<string, { route: Route; api: Api }>();
  for (const route of routes) {
    for (const { api, resource } of resourcesOf(route)) index.set(`${route.method} ${resource}`, { route, api });
  }
  return index;
}

/**
 * Finds the route of the event by its resource template (never by the raw path). A method the resource does not serve
 * reaches a function through the resource's catch-all `ANY` method and is a 405, as on the local server.
 */
export function routeResolution(
  index: RouteIndex,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ControllerContext> {
  const servedResources = new Set([...index.keys()].map(resourceOfKey));
  return {
    name: 'route-resolution',
    before: (request) => {
      const resource = request.event.resource === '' ? '/' : request.event.resource;
      const found = index.get(`${request.event.httpMethod.toUpperCase()} ${resource}`);
      if (!found) throw new ApiError(servedResources.has(resource) ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND');
      request.context.controller.route = found.route;
      request.context.controller.api = found.api;
    },
  };
}
