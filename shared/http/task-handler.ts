import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { tracingMiddleware } from '../log/tracing.ts';
import type { Deps } from '../ports/deps.ts';
import { lambdaContextLogging, metricsFlushing } from './middleware/powertools.ts';

/**
 * A Lambda handler no API Gateway request reaches (the integrity state machine's task): Powertools as the operation
 * groups have it (metrics flushed, the Lambda request id and cold-start flag on every log line, an X-Ray segment), so
 * a failed run's lines are found by the id the state machine's history shows.
 */
export function taskHandler<Event, Result>(
  deps: () => Deps,
  task: (event: Event) => Promise<Result>,
): (event: Event, context: Context) => Promise<Result> {
  return middy<Event, Result, Error, Context>()
    .use(metricsFlushing(deps))
    .use(lambdaContextLogging(deps))
    .use(tracingMiddleware())
    .handler(task);
}
