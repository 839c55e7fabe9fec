import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { newId } from '../../ids.ts';
import { errorResponse, toApiError } from '../error-response.ts';
import type { ControllerContext } from './controller-context.ts';

/** Renders any error as the API's error envelope; registered first so that middy runs it last. */
export function errorEnvelope(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ControllerContext> {
  return {
    name: 'error-envelope',
    onError: (request) => {
      const state = request.context.controller;
      const apiError = toApiError(request.error);
      const requestId = state?.requestId ?? newId();
      if (apiError.status >= 500) {
        const fault = request.error;
        state?.logger.error('unhandled fault', { error: fault?.name, detail: fault?.message, stack: fault?.stack });
      }
      request.response = errorResponse(apiError, requestId);
      state?.logger.info('request', {
        method: request.event.httpMethod,
        resource: request.event.resource,
        status: apiError.status,
        code: apiError.code,
        durationMs: state ? Date.now() - state.startedAt : undefined,
      });
    },
  };
}
