import type { Context } from 'aws-lambda';
import type { Caller } from '../../auth/resolve-caller.ts';
import type { Logger } from '../../log/logger.ts';
import type { Api, Route } from '../../routes/route.ts';

/** What the middlewares learn about a request, in the order they run. */
export interface RequestState {
  requestId: string;
  logger: Logger;
  startedAt: number;
  route?: Route;
  api?: Api;
  body?: unknown;
  rawBody?: string;
  caller?: Caller;
}

/** The Lambda context with the controller's per-request state. */
export interface ControllerContext extends Context {
  controller: RequestState;
}
