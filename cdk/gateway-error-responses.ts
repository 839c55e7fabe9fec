import { ResponseType, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { CORS_RESPONSE_HEADERS } from '#shared/http/cors.ts';
import { API_VERSION_META } from '#shared/http/envelope.ts';
import { ERROR_CODES, type ErrorCode } from '#shared/http/error-codes.ts';

/** One of API Gateway's own errors, answered in the controller's error envelope. */
export interface GatewayError {
  readonly type: ResponseType;
  readonly code: ErrorCode;
  /** Replaces the registry's message where API Gateway's cause is narrower or wider than the code's usual one. */
  readonly message?: string;
}

/**
 * The errors API Gateway raises before (or instead of) a controller function answering. Status and message come from
 * the shared error registry, so clients see the same code and text whoever answered.
 */
export const GATEWAY_ERRORS: readonly GatewayError[] = [
  // API Gateway's answer when no method matches the request's path and verb.
  { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, code: 'NOT_FOUND' },
  // Requests the web ACL's managed rules judge an attack (its rate limit answers 429 itself, see controller-firewall).
  { type: ResponseType.WAF_FILTERED, code: 'COULD_NOT_VALIDATE', message: 'The request was rejected by the firewall.' },
  // Every method is unauthenticated to API Gateway (the functions check API sessions), no validators or keys: the
  // other 4xx left are an unmatched request that also carried an `Authorization` header, which API Gateway then
  // rejects as a malformed SigV4 signature (403) instead of the usual "missing authentication token".
  { type: ResponseType.DEFAULT_4XX, code: 'NOT_FOUND' },
  { type: ResponseType.REQUEST_TOO_LARGE, code: 'REQUEST_ENTITY_TOO_LARGE', message: 'The request body is too large.' },
  { type: ResponseType.THROTTLED, code: 'SERVER_TOO_MANY_REQUESTS' },
  { type: ResponseType.INTEGRATION_TIMEOUT, code: 'TIMEOUT' },
  // A function that crashed, timed out on its own or returned a malformed response.
  { type: ResponseType.DEFAULT_5XX, code: 'UNHANDLED', message: 'The controller failed to process the request.' },
];

/** The response body of a gateway error: a VTL template, so `$context.requestId` is filled in per request. */
export function gatewayErrorBody(code: ErrorCode, message: string): string {
  if (/[$#]/.test(message)) throw new Error(`Gateway error message for ${code} must not contain VTL syntax ($, #)`);
  return JSON.stringify({ error: { code, message, requestId: '$context.requestId' }, meta: API_VERSION_META });
}

/** Adds {@link GATEWAY_ERRORS} to the API. */
export function addGatewayErrorResponses(api: RestApi): void {
  for (const { type, code, message } of GATEWAY_ERRORS) {
    const registered = ERROR_CODES[code];
    api.addGatewayResponse(type.responseType, {
      type,
      statusCode: String(registered.status),
      templates: { 'application/json': gatewayErrorBody(code, message ?? registered.message) },
      // Browsers hide API Gateway's own errors from cross-origin pages without these.
      responseHeaders: Object.fromEntries(
        Object.entries(CORS_RESPONSE_HEADERS).map(([name, value]) => [name, `'${value}'`]),
      ),
    });
  }
}
