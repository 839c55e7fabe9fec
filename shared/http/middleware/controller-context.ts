import type { Context } from 'aws-lambda';
import type { Caller } from '../../auth/resolve-caller.ts';
import type { Logger } from '../../log/logger.ts';
import type { Api, Route } from '../../routes/route.ts';

/** What the middlewares learn about a request, in the order they run. */
export interface RequestState {
  requestId: string;
  logger: Logger;
  startedAt: number;
  /**
   * Set when a load balancer sent the request: its answer goes back in the load balancer's shape, with `headers` or
   * `multiValueHeaders` as the request came (the target group's `lambda.multi_value_headers.enabled`).
   */
  albResponse?: 'headers' | 'multiValueHeaders';
  route?: Route;
  api?: Api;
  pathParameters?: Record<string, string>;
  body?: unknown;
  rawBody?: string;
  caller?: Caller;
  /** The operation answered a routine write (`HttpResult.routine`): its success is logged as a read's is. */
  routine?: boolean;
}

/** The Lambda context with the controller's per-request state. */
export interface ControllerContext extends Context {
  controller: RequestState;
}
