import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ApiError } from '../../errors/api-error.ts';
import type { ControllerContext } from './controller-context.ts';

/** The reference controller's body limit, checked before anything else (authentication included). */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * How deeply arrays and objects may nest in a JSON body. The API's documents are a few levels deep; what reads a
 * parsed body (validation, error causes that echo values, logging, DynamoDB) recurses, and thousands of levels
 * overflow the stack.
 */
export const MAX_JSON_DEPTH = 64;

// The few non-JSON bodies the API takes (PEM certificates and CSRs for enrollment and CA verification, the OIDC
// provider's HTML forms) stay raw; anything else is parsed as JSON, including requests whose client sent no or a
// generic content type.
const RAW_BODY_TYPES =
  /^\s*(text\/plain|application\/(x-pem-file|pkcs7|pkcs10|x-x509|pkix|jwt|x-www-form-urlencoded)|multipart\/form-data)/i;

const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function isJson(contentType: string | undefined): boolean {
  return contentType === undefined || !RAW_BODY_TYPES.test(contentType);
}

/**
 * Whether JSON text nests arrays and objects deeper than `limit`, found by one loop over the text that skips
 * strings, so that it cannot overflow the stack itself. Malformed text gets an answer too; JSON.parse judges it next.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}

/**
 * Enforces the body limit and parses JSON bodies; malformed JSON, or JSON nested deeper than {@link MAX_JSON_DEPTH},
 * is a 400 `COULD_NOT_PARSE_BODY`.
 */
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
      if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
        throw new ApiError('COULD_NOT_PARSE_BODY', {
          cause: { message: `arrays and objects nest deeper than ${MAX_JSON_DEPTH} levels` },
        });
      }
      try {
        state.body = JSON.parse(text);
      } catch (error) {
        throw new ApiError('COULD_NOT_PARSE_BODY', { cause: { message: (error as Error).message } });
      }
    },
  };
}
