import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ApiError } from '../../errors/api-error.ts';
import type { OperationGroup } from '../../routes/route.ts';
import { canonicalPath, type RouteMatcher } from '../../routes/route-matcher.ts';
import type { ControllerContext } from './controller-context.ts';

/**
 * Finds the route of the event: by its resource template when API Gateway names one, by its raw path when a load
 * balancer sent it (which names none); both through the one route matcher. A method the resource does not serve
 * reaches a function through the resource's catch-all `ANY` method and is a 405, as on the local server; a route of
 * another group (a listener rule or resource sending it to the wrong function) is not found here.
 */
export function routeResolution(
  group: OperationGroup,
  matcher: RouteMatcher,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ControllerContext> {
  return {
    name: 'route-resolution',
    before: (request) => {
      const { event } = request;
      const state = request.context.controller;
      const match = state.albResponse
        ? matcher.match(event.httpMethod, canonicalPath(event.path))
        : matcher.matchResource(
            event.httpMethod,
            event.resource,
            (event.pathParameters ?? {}) as Record<string, string>,
          );
      if (match.kind === 'method-not-allowed') throw new ApiError('METHOD_NOT_ALLOWED');
      if (match.kind === 'not-found' || match.route.group !== group) throw new ApiError('NOT_FOUND');
      // The load balancer's event names no resource: the request's log line takes the one found.
      event.resource = match.resource;
      state.route = match.route;
      state.api = match.api;
      state.pathParameters = match.pathParameters;
    },
  };
}
