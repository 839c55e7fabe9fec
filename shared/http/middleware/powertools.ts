import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { MiddlewareObj } from '@middy/core';
import type { Deps } from '../../ports/deps.ts';

type Hook = (request: unknown) => unknown;
interface Hooks {
  before?: Hook;
  after?: Hook;
  onError?: Hook;
}

/**
 * A middleware made on its first request: the Powertools middlewares take the logger and metrics instances, which
 * live in the deps, and the deps are built on first use, never at import time.
 */
function madeOnFirstUse<Event, Result, Context>(
  name: string,
  make: () => Hooks,
): MiddlewareObj<Event, Result, Error, Context> {
  let made: Hooks | undefined;
  const hooks = () => {
    made ??= make();
    return made;
  };
  return {
    name,
    before: (request) => hooks().before?.(request) as undefined,
    after: (request) => hooks().after?.(request) as undefined,
    onError: (request) => hooks().onError?.(request) as undefined,
  };
}

/**
 * Powertools' `injectLambdaContext`: every line of the invocation carries the Lambda request id
 * (`function_request_id`), the cold-start flag, the function's name, version and memory, and the X-Ray trace id.
 */
export function lambdaContextLogging<Event, Result, Context>(
  deps: () => Deps,
): MiddlewareObj<Event, Result, Error, Context> {
  // Never the event, whatever POWERTOOLS_LOGGER_LOG_EVENT says: it carries passwords and tokens, which only our own
  // redacting request log may describe.
  return madeOnFirstUse(
    'lambda-context-logging',
    () => injectLambdaContext(deps().logger.powertools, { logEvent: false }) as Hooks,
  );
}

/**
 * Powertools' `logMetrics`: flushes the invocation's metrics as EMF when it ends, error or not, and counts the
 * cold start (`ColdStart`). Nothing when metrics are off.
 */
export function metricsFlushing<Event, Result, Context>(
  deps: () => Deps,
): MiddlewareObj<Event, Result, Error, Context> {
  return madeOnFirstUse('metrics-flushing', () => {
    const metrics = deps().metrics.powertools;
    return metrics ? (logMetrics(metrics, { captureColdStartMetric: true }) as Hooks) : {};
  });
}
