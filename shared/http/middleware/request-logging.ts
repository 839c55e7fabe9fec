import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { newId } from '../../ids.ts';
import type { Logger } from '../../log/logger.ts';
import type { ControllerContext } from './controller-context.ts';

/**
 * Gives the request its id and a logger that stamps it on every line, and logs one summary line when the response
 * is ready. Only the method, resource and status are logged: never headers or bodies, which carry secrets.
 */
export function requestLogging(
  logger: () => Logger,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ControllerContext> {
  return {
    name: 'request-logging',
    before: (request) => {
      const requestId = newId();
      request.context.controller = {
        requestId,
        startedAt: Date.now(),
        logger: logger().child({ requestId, awsRequestId: request.context.awsRequestId }),
      };
    },
    after: (request) => {
      const state = request.context.controller;
      state.logger.info('request', {
        method: request.event.httpMethod,
        resource: request.event.resource,
        status: request.response?.statusCode,
        durationMs: Date.now() - state.startedAt,
      });
    },
  };
}
