import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Deps } from '../../ports/deps.ts';
import { errorResponse, toApiError } from '../error-response.ts';
import type { ControllerContext } from './controller-context.ts';
import { frontDoorOf, requestIdOf } from './request-logging.ts';
import { writeRequestSummary } from './request-summary.ts';

/**
 * Renders any error as the API's error envelope, whose `requestId` is the request's (API Gateway's) id that its log
 * lines carry, and counts it (`ClientErrors` or `ServerErrors` by code). Registered before the request's own
 * middlewares so that middy runs it after theirs; the Powertools middlewares registered before it run after it.
 */
export function errorEnvelope(
  deps: () => Deps,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ControllerContext> {
  return {
    name: 'error-envelope',
    onError: (request) => {
      const state = request.context.controller;
      const apiError = toApiError(request.error);
      const requestId = state?.requestId ?? requestIdOf(request.event);
      if (apiError.status >= 500) {
        const fault = request.error;
        state?.logger.error('unhandled fault', { error: fault?.name, detail: fault?.message, stack: fault?.stack });
      }
      request.response = errorResponse(apiError, requestId);
      deps().metrics.count(apiError.status >= 500 ? 'ServerErrors' : 'ClientErrors', { code: apiError.code });
      if (state) {
        const summary = {
          method: request.event.httpMethod,
          resource: request.event.resource,
          via: frontDoorOf(state),
          status: apiError.status,
          code: apiError.code,
          durationMs: Date.now() - state.startedAt,
        };
        writeRequestSummary(state.logger, summary, deps().config.requestLog);
      }
    },
  };
}
