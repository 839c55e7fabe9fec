import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { newId } from '../../ids.ts';
import type { Deps } from '../../ports/deps.ts';
import type { ControllerContext, RequestState } from './controller-context.ts';
import { writeRequestSummary } from './request-summary.ts';

/**
 * The request's id: API Gateway's (`requestContext.requestId`, also in its access log and in the bodies of its own
 * errors), so that one id finds the request in the error body, the function's log lines and the access log. The
 * local server gives every request one as API Gateway does; only an event without one (a direct invoke) gets its own.
 */
export function requestIdOf(event: APIGatewayProxyEvent): string {
  const id = event.requestContext?.requestId;
  return typeof id === 'string' && id !== '' ? id : newId();
}

/**
 * Which front door sent the request: `alb` for a load balancer's target event, `api-gateway` for a proxy event. Both
 * can deliver at once while a deployment moves from one to the other.
 */
export function frontDoorOf(state: RequestState | undefined): 'alb' | 'api-gateway' {
  return state?.albResponse ? 'alb' : 'api-gateway';
}

/**
 * Gives the request its id and a logger that stamps it on every line, and writes its summary line when the response
 * is ready, unless sampling leaves it out (`request-summary.ts`). The Lambda request id, the cold-start flag and the
 * X-Ray trace id come from Powertools (`injectLambdaContext`).
 */
export function requestLogging(
  deps: () => Deps,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ControllerContext> {
  return {
    name: 'request-logging',
    before: (request) => {
      const requestId = requestIdOf(request.event);
      request.context.controller = {
        requestId,
        startedAt: Date.now(),
        logger: deps().logger.child({ requestId }),
      };
    },
    after: (request) => {
      const state = request.context.controller;
      const summary = {
        method: request.event.httpMethod,
        resource: request.event.resource,
        via: frontDoorOf(state),
        status: request.response?.statusCode,
        durationMs: Date.now() - state.startedAt,
        ...(state.routine ? { routine: true } : {}),
      };
      writeRequestSummary(state.logger, summary, deps().config.requestLog);
    },
  };
}
