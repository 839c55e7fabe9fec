import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Logger } from './logger.ts';

/** The controller's business metrics (CloudWatch EMF, namespace from the configuration). */
export type MetricName =
  /** A login: `method` (password, cert, ext-jwt) and `outcome` (success, or the error code it was refused with). */
  | 'Logins'
  /** An identity locked out after repeated wrong passwords. */
  | 'Lockouts'
  /** An identity or router enrolled: `method` (ott, ottca, ca, updb, token, erott, trott). */
  | 'Enrollments'
  /** A Dial or Bind session created: `type`. */
  | 'SessionsCreated'
  /** An error response: `code`, the API's error code (4xx and 5xx counted apart). */
  | 'ClientErrors'
  | 'ServerErrors'
  /** Integrity findings of a finished run: `mode` (check, fix). */
  | 'IntegrityFindings';

/**
 * Counts events as CloudWatch metrics. With dimensions, each count goes out at once as its own EMF document (a
 * request may count a login and an error, whose dimensions differ); without, counts wait for the flush that
 * Powertools' `logMetrics` middleware does at the end of the invocation.
 */
export interface ControllerMetrics {
  count(name: MetricName, dimensions?: Readonly<Record<string, string>>, value?: number): void;
  /** The Powertools instance `logMetrics` flushes; undefined when metrics are off. */
  readonly powertools: Metrics | undefined;
}

/** Metrics off: `npm start` and the tests, unless they name a namespace. */
export const NO_METRICS: ControllerMetrics = { count: () => undefined, powertools: undefined };

/**
 * The metrics of a function: EMF lines on stdout, which Lambda's log pipeline turns into CloudWatch metrics. Only
 * with a namespace (`POWERTOOLS_METRICS_NAMESPACE`, which the CDK sets on every function): locally none is set, so
 * `npm start` and the tests print no EMF unless they ask for it. Powertools' own warnings (such as an invocation that
 * counted nothing, the usual case) go to the logger at debug level.
 */
export function createMetrics(namespace: string | undefined, serviceName: string, logger: Logger): ControllerMetrics {
  if (!namespace) return NO_METRICS;
  const quiet = {
    debug: (...args: unknown[]) => logger.debug(String(args[0]), { source: 'powertools-metrics' }),
    info: (...args: unknown[]) => logger.debug(String(args[0]), { source: 'powertools-metrics' }),
    warn: (...args: unknown[]) => logger.debug(String(args[0]), { source: 'powertools-metrics' }),
    error: (...args: unknown[]) => logger.error(String(args[0]), { source: 'powertools-metrics' }),
  };
  const metrics = new Metrics({ namespace, serviceName, logger: quiet });
  return {
    powertools: metrics,
    count: (name, dimensions = {}, value = 1) => {
      const entries = Object.entries(dimensions);
      if (entries.length === 0) {
        metrics.addMetric(name, MetricUnit.Count, value);
        return;
      }
      const single = metrics.singleMetric();
      for (const [dimension, dimensionValue] of entries) single.addDimension(dimension, dimensionValue);
      single.addMetric(name, MetricUnit.Count, value);
    },
  };
}
