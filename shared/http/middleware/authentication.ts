import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { traceLogFields } from '../../auth/identity-trace.ts';
import { resolveCaller } from '../../auth/resolve-caller.ts';
import type { Deps } from '../../ports/deps.ts';
import type { OperationMap } from '../operation.ts';
import type { ControllerContext } from './controller-context.ts';

/**
 * Resolves the caller and enforces the route's auth level before the operation runs, reading with it what the
 * operation asks (`callerReads`); the request's log lines name the caller's identity, and the trace id while an admin
 * traces it.
 */
export function authentication(
  deps: () => Deps,
  operations: OperationMap = {},
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ControllerContext> {
  return {
    name: 'authentication',
    before: async (request) => {
      const state = request.context.controller;
      const route = state.route;
      if (!route) return;
      const reads = operations[route.operation]?.callerReads;
      const clientCertPem = request.event.requestContext?.identity?.clientCert?.clientCertPem;
      const caller = await resolveCaller(deps(), request.event.headers, route, reads, clientCertPem);
      if (caller) {
        state.caller = caller;
        state.logger = state.logger.child({
          identityId: caller.identity.id,
          ...traceLogFields(caller.identity, deps().now()),
        });
      }
    },
  };
}
