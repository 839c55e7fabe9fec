import type { APIGatewayProxyResult } from 'aws-lambda';
import { ApiError } from '../errors/api-error.ts';
import { boundedCause, boundedText } from './bounded-echo.ts';
import { CORS_RESPONSE_HEADERS } from './cors.ts';
import { API_VERSION_META } from './envelope.ts';

/** The headers of every JSON response: its type, and the cross-origin access browser clients need. */
export const JSON_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'application/json',
  ...CORS_RESPONSE_HEADERS,
};

/**
 * The error envelope `{error: {code, message, requestId, cause}, meta}` for an ApiError. Every answer with an error is
 * built here, so the bound on what it echoes of the request (`bounded-echo.ts`) holds whichever handler threw.
 */
export function errorResponse(error: ApiError, requestId: string): APIGatewayProxyResult {
  return {
    statusCode: error.status,
    headers: { ...JSON_HEADERS, ...error.headers },
    body: JSON.stringify({
      error: {
        code: error.code,
        message: boundedText(error.message),
        requestId,
        ...(error.apiCause ? { cause: boundedCause(error.apiCause) } : {}),
      },
      meta: API_VERSION_META,
    }),
  };
}

/** Any thrown value as an ApiError: ours as they are, everything else as a 500 `UNHANDLED` (logged by the caller). */
export function toApiError(error: unknown): ApiError {
  return error instanceof ApiError ? error : new ApiError('UNHANDLED');
}
