import type { Tracer } from '@aws-lambda-powertools/tracer';
import type { MiddlewareObj } from '@middy/core';
import { DEFAULT_SERVICE_NAME } from './logger.ts';

/**
 * Whether X-Ray tracing runs: inside Lambda (`AWS_EXECUTION_ENV`, which Powertools' Tracer itself requires) unless
 * `POWERTOOLS_TRACE_ENABLED` is `false`. Never for `npm start` or the tests, which have no X-Ray daemon.
 */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.AWS_EXECUTION_ENV) && env.POWERTOOLS_TRACE_ENABLED?.toLowerCase() !== 'false';
}

/**
 * Powertools' Tracer and its middy middleware, loaded only where tracing runs. The X-Ray SDK under it is the
 * heaviest import a function has (about 110 KB and tens of milliseconds of module evaluation, most of it Node's
 * HTTP and TLS modules it loads): a module that never traces does not pay for it. In Lambda it loads here, at
 * init, before the first request.
 */
const loaded = tracingEnabled()
  ? await Promise.all([
      import('@aws-lambda-powertools/tracer'),
      import('@aws-lambda-powertools/tracer/middleware'),
    ]).then(([{ Tracer }, { captureLambdaHandler }]) => {
      const tracer: Tracer = new Tracer({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? DEFAULT_SERVICE_NAME });
      return { tracer, captureLambdaHandler };
    })
  : undefined;

/** An AWS SDK v3 client whose calls show as X-Ray subsegments when tracing runs; the client itself otherwise. */
export function traced<Client>(client: Client): Client {
  return loaded ? loaded.tracer.captureAWSv3Client(client) : client;
}

/**
 * Powertools' `captureLambdaHandler` (for middy's `use`): a segment per invocation (cold start and service annotated,
 * errors recorded); none where tracing does not run.
 */
export function tracingMiddleware<Event, Result, Err, Context>(): MiddlewareObj<Event, Result, Err, Context>[] {
  if (!loaded) return [];
  // Never the response: it carries session tokens, enrollment certificates and TOTP secrets, and a trace is no place
  // for them (Powertools copies responses into the segment by default).
  return [
    loaded.captureLambdaHandler(loaded.tracer, { captureResponse: false }) as MiddlewareObj<
      Event,
      Result,
      Err,
      Context
    >,
  ];
}
