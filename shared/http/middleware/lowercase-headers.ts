import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

/** Header names as one case, so every reader looks them up lowercased (`zt-session`), whatever the client sent. */
function lowercased<V>(headers: Readonly<Record<string, V>>): Record<string, V> {
  const out: Record<string, V> = Object.create(null);
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}

/**
 * Lowercases the event's header names (single- and multi-value), as HTTP names are case-insensitive and API Gateway
 * passes them as sent. Written here rather than taken from `@middy/http-header-normalizer`, whose canonical-case mode
 * and its table of exceptions every function's cold start would read for nothing.
 */
export function lowercaseHeaders(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    name: 'lowercase-headers',
    before: (request) => {
      const { event } = request;
      if (event.headers) event.headers = lowercased(event.headers);
      if (event.multiValueHeaders) event.multiValueHeaders = lowercased(event.multiValueHeaders);
    },
  };
}
