import type { MiddlewareObj } from '@middy/core';
import type { ALBEvent, APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Deps } from '../../ports/deps.ts';
import { albEventModule, isAlbEvent } from '../is-alb-event.ts';
import type { ControllerContext } from './controller-context.ts';

/**
 * Takes a load balancer's target event in: the middlewares after it read the proxy event API Gateway would have sent
 * (`alb-event.ts`), and the request remembers to be answered in the load balancer's shape. A proxy event passes as it
 * came. Registered after the request's id and logger exist and before anything reads the event.
 */
export function albEvents(
  deps: () => Deps,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ControllerContext> {
  return {
    name: 'alb-events',
    before: async (request) => {
      const event: APIGatewayProxyEvent | ALBEvent = request.event;
      if (!isAlbEvent(event)) return;
      const { albResponseShape, proxyEventOfAlb } = await albEventModule();
      const state = request.context.controller;
      state.albResponse = albResponseShape(event);
      request.event = proxyEventOfAlb(event, deps().config, state.requestId);
    },
  };
}
