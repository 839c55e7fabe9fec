import { ERROR_CODES, type ErrorCode } from '#shared/errors/error-codes.ts';
import { CORS_RESPONSE_HEADERS } from '#shared/http/cors.ts';
import { API_VERSION_META } from '#shared/http/envelope.ts';

/** One of API Gateway's own errors, answered in the controller's error envelope. */
export interface GatewayError {
  /** API Gateway's response type, e.g. `MISSING_AUTHENTICATION_TOKEN`. */
  readonly type: string;
  readonly code: ErrorCode;
  /** Replaces the registry's message where API Gateway's cause is narrower or wider than the code's usual one. */
  readonly message?: string;
}

/**
 * The errors API Gateway raises before (or instead of) a controller function answering. Status and message come from
 * the shared error registry, so clients see the same code and text whoever answered.
 */
export const GATEWAY_ERRORS: readonly GatewayError[] = [
  // API Gateway's answer when no resource matches the request's path (every served resource takes any method).
  { type: 'MISSING_AUTHENTICATION_TOKEN', code: 'NOT_FOUND' },
  // Requests the web ACL's managed rules judge an attack (its rate limit answers 429 itself, see controller-firewall).
  { type: 'WAF_FILTERED', code: 'COULD_NOT_VALIDATE', message: 'The request was rejected by the firewall.' },
  // Every method is unauthenticated to API Gateway (the functions check API sessions), no validators or keys: the
  // other 4xx left are an unmatched request that also carried an `Authorization` header, which API Gateway then
  // rejects as a malformed SigV4 signature (403) instead of the usual "missing authentication token".
  { type: 'DEFAULT_4XX', code: 'NOT_FOUND' },
  { type: 'REQUEST_TOO_LARGE', code: 'REQUEST_ENTITY_TOO_LARGE', message: 'The request body is too large.' },
  { type: 'THROTTLED', code: 'SERVER_TOO_MANY_REQUESTS' },
  { type: 'INTEGRATION_TIMEOUT', code: 'TIMEOUT' },
  // A function that crashed, timed out on its own or returned a malformed response.
  { type: 'DEFAULT_5XX', code: 'UNHANDLED', message: 'The controller failed to process the request.' },
];

/** One entry of the body's `x-amazon-apigateway-gateway-responses`. */
export interface GatewayResponse {
  readonly statusCode: number;
  readonly responseParameters: Readonly<Record<string, string>>;
  readonly responseTemplates: Readonly<Record<string, string>>;
}

/** The response body of a gateway error: a VTL template, so `$context.requestId` is filled in per request. */
export function gatewayErrorBody(code: ErrorCode, message: string): string {
  if (/[$#]/.test(message)) throw new Error(`Gateway error message for ${code} must not contain VTL syntax ($, #)`);
  return JSON.stringify({ error: { code, message, requestId: '$context.requestId' }, meta: API_VERSION_META });
}

/**
 * {@link GATEWAY_ERRORS} as the REST API body declares them (in the body rather than as resources of their own, which
 * CloudFormation warns would drift from a body-defined API).
 */
export function gatewayResponses(): Record<string, GatewayResponse> {
  return Object.fromEntries(
    GATEWAY_ERRORS.map(({ type, code, message }) => {
      const registered = ERROR_CODES[code];
      return [
        type,
        {
          statusCode: registered.status,
          // Browsers hide API Gateway's own errors from cross-origin pages without these. Static values are quoted.
          responseParameters: Object.fromEntries(
            Object.entries(CORS_RESPONSE_HEADERS).map(([name, value]) => [
              `gatewayresponse.header.${name}`,
              `'${value}'`,
            ]),
          ),
          responseTemplates: { 'application/json': gatewayErrorBody(code, message ?? registered.message) },
        },
      ];
    }),
  );
}
