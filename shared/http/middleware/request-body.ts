import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ApiError } from '../api-error.ts';
import type { ControllerContext } from './controller-context.ts';

/** The reference controller's body limit, checked before anything else (authentication included). */
export const MAX_BODY_BYTES = 1024 * 1024;

// The few non-JSON bodies the API takes (PEM certificates and CSRs for enrollment and CA verification) stay raw;
// anything else is parsed as JSON, including requests whose client sent no or a generic content type.
const RAW_BODY_TYPES = /^\s*(text\/plain|application\/(x-pem-file|pkcs7|pkcs10|x-x509|pkix|jwt))/i;

function isJson(contentType: string | undefined): boolean {
  return contentType === undefined || !RAW_BODY_TYPES.test(contentType);
}

/** Enforces the body limit and parses JSON bodies; malformed JSON is a 400 `COULD_NOT_PARSE_BODY`. */
export function requestBody(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ControllerContext> {
  return {
    name: 'request-body',
    before: (request) => {
      const { event } = request;
      if (event.body === null || event.body === undefined || event.body === '') return;
      const raw = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
      if (raw.length > MAX_BODY_BYTES) throw new ApiError('REQUEST_ENTITY_TOO_LARGE');
      const text = raw.toString('utf8');
      const state = request.context.controller;
      state.rawBody = text;
      if (!isJson(event.headers['content-type'])) return;
      try {
        state.body = JSON.parse(text);
      } catch (error) {
        throw new ApiError('COULD_NOT_PARSE_BODY', { cause: { message: (error as Error).message } });
      }
    },
  };
}
