import * as z from 'zod';
import { getOrNotFound } from '#shared/crud/crud-operations.ts';
import { type IdentityTracing, identities } from '#shared/entities/identity.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import { ok } from '#shared/http/envelope.ts';
import { documented } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { newToken } from '#shared/ids.ts';
import { withOptimisticRetry } from '#shared/store/optimistic-retry.ts';

/** The longest trace an admin may ask for: tracing is a debugging aid, not a standing setting. */
export const MAX_TRACE_MS = 24 * 60 * 60 * 1000;
/** What the reference traces when no channel (or `all`) is named. */
const ALL_CHANNELS = ['all'];

const traceSpecSchema = z.object({
  enabled: z.boolean().nullable().optional(),
  duration: z.string().max(64).nullable().optional(),
  traceId: z.string().max(128).nullable().optional(),
  channels: z.array(z.string().min(1).max(64)).max(16).nullable().optional(),
});

/** Milliseconds per unit of a Go duration (`time.ParseDuration`, which the reference parses `duration` with). */
const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
const DURATION_PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;

/** A Go duration (`90s`, `1h30m`, `1.5h`, optionally signed; `0` alone) in milliseconds; undefined when malformed. */
export function parseGoDuration(text: string): number | undefined {
  const sign = text.startsWith('-') ? -1 : 1;
  const body = text.replace(/^[-+]/, '');
  if (body === '0') return 0;
  if (body === '') return undefined;
  let total = 0;
  let index = 0;
  while (index < body.length) {
    DURATION_PART.lastIndex = index;
    const part = DURATION_PART.exec(body);
    if (!part) return undefined;
    total += Number(part[1]) * (UNIT_MS[part[2] ?? ''] ?? 0);
    index = DURATION_PART.lastIndex;
  }
  return sign * total;
}

/**
 * `PUT /identities/{id}/trace`: starts tracing the identity for `duration` under `traceId` (a new one when none is
 * given), or stops it (`enabled` false); answered as `{enabled, traceId, until}`. The trace is kept on the identity
 * (`tracing`, which its views do not show): until `until`, every log line of a request the identity makes carries the
 * `traceId` (the authentication middleware stamps it), as the reference stamps its traced identity's requests. The
 * `channels` named (`all` when none) are kept but select nothing: this controller's log lines have no channels.
 * Starting and stopping are logged, with the trace.
 */
export const updateIdentityTracing = documented(
  async (request, deps) => {
    const spec = parseWith(traceSpecSchema, request.body);
    let tracing: IdentityTracing | undefined;
    if (spec.enabled) {
      const duration = spec.duration ?? '';
      const ms = parseGoDuration(duration);
      if (ms === undefined) throw invalidField('duration', `time: invalid duration "${duration}"`, duration);
      if (ms <= 0 || ms > MAX_TRACE_MS) {
        throw invalidField('duration', 'duration must be more than 0 and at most 24h', duration);
      }
      const channels = spec.channels ?? [];
      tracing = {
        traceId: spec.traceId || newToken(),
        until: new Date(deps.now().getTime() + ms).toISOString(),
        channels: channels.length === 0 || channels.includes('all') ? ALL_CHANNELS : [...new Set(channels)],
      };
    }
    await withOptimisticRetry(async () => {
      const stored = await getOrNotFound(deps, identities, request.pathParameters.id ?? '');
      const { tracing: _previous, ...rest } = stored.doc;
      const next = { ...rest, ...(tracing ? { tracing } : {}), updatedAt: deps.now().toISOString() };
      await deps.store.transact(deps.store.replaceOps(identities, stored, next));
    });
    const identityId = request.pathParameters.id;
    if (tracing) request.logger.info('identity trace started', { tracedIdentityId: identityId, ...tracing });
    else request.logger.info('identity trace stopped', { tracedIdentityId: identityId });
    return ok(tracing ? { enabled: true, traceId: tracing.traceId, until: tracing.until } : { enabled: false });
  },
  { body: traceSpecSchema },
);
