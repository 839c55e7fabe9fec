import type { RequestLogConfig } from '../../config.ts';
import type { Logger } from '../../log/logger.ts';

/** Methods that change nothing: the only requests whose successes are sampled. */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What a request's summary line says: never headers or bodies, which carry secrets. */
export interface RequestSummary {
  readonly method: string;
  readonly resource: string;
  readonly via: 'alb' | 'api-gateway';
  readonly status: number | undefined;
  /** The API's error code, for a failure. */
  readonly code?: string;
  readonly durationMs: number | undefined;
  /** A routine write (`HttpResult.routine`): sampled like a read when it succeeds. */
  readonly routine?: boolean;
}

/**
 * Writes a request's summary line, or leaves it out when it is one of the successful reads sampling skips. A fleet's
 * log bill is its polls' lines: one successful read in `sampleRate` is written, chosen by `Math.random` so that no
 * pattern of requests (a client alternating two reads, say) is always left out, and says `sampleRate`: it stands for
 * that many requests, so `sum(sampleRate)` over the lines (1 where absent) counts them. Always written: every failure
 * (4xx and 5xx: refusals, failed logins, throttles), every request that took `slowMs` or longer (`slow: true`), and every
 * write (logins, enrollments, sessions, revocations, deletions: what changed, and who changed it) but the routine ones
 * a client sends on a timer (an OIDC token refresh, `routine: true` on the line), sampled as reads. Metrics do not
 * come from these lines (`metrics.ts` counts apart), so sampling leaves them exact.
 */
export function writeRequestSummary(logger: Logger, summary: RequestSummary, config: RequestLogConfig): void {
  const failed = summary.status === undefined || summary.status >= 400;
  const slow = summary.durationMs !== undefined && summary.durationMs >= config.slowMs;
  const alwaysWritten = failed || slow || (!READ_METHODS.has(summary.method.toUpperCase()) && !summary.routine);
  if (!alwaysWritten && config.sampleRate > 1 && Math.random() * config.sampleRate >= 1) return;
  logger.info('request', {
    ...summary,
    ...(slow ? { slow } : {}),
    ...(alwaysWritten ? {} : { sampleRate: config.sampleRate }),
  });
}
