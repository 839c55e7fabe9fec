import * as z from 'zod';
import type { Deps } from '../ports/deps.ts';
import { ConcurrentModificationError } from '../store/entity-store.ts';
import { fitsKey, keys } from '../store/keys.ts';
import { parseStoredJson } from '../store/stored-json.ts';
import { readItem, versionedPutOp } from '../store/versioned-items.ts';

/**
 * The session requests an identity was refused for failing posture checks (getIdentityFailedServiceRequests): the
 * last `MAX_FAILED_REQUESTS`, oldest first, as the reference keeps them (in memory, per identity). One item per
 * identity, `FAILED-SESSIONS#<identityId>` / `DATA`, rewritten (version-checked) on each refusal; volatile like
 * posture data (TTL a week after the last refusal) and kept under `MAX_RECORD_BYTES`.
 */

export const MAX_FAILED_REQUESTS = 100;
const MAX_RECORD_BYTES = 300 * 1024;
const TTL_MS = 7 * 24 * 60 * 60_000;

const failedKey = keys.failedRequests;

export const failedServiceRequestSchema = z.object({
  apiSessionId: z.string(),
  serviceId: z.string(),
  serviceName: z.string(),
  sessionType: z.string(),
  when: z.string(),
  policyFailures: z.array(
    z.object({
      policyId: z.string(),
      policyName: z.string(),
      checks: z.array(z.record(z.string(), z.unknown())),
    }),
  ),
});
export type FailedServiceRequest = z.infer<typeof failedServiceRequestSchema>;

async function read(deps: Deps, identityId: string): Promise<{ failures: FailedServiceRequest[]; version: number }> {
  if (!fitsKey(identityId)) return { failures: [], version: 0 };
  const Item = await readItem(deps.store, failedKey(identityId));
  if (!Item) return { failures: [], version: 0 };
  return {
    failures: parseStoredJson(Item.failures, z.array(failedServiceRequestSchema), []),
    version: Number(Item.version ?? 0),
  };
}

/** The identity's recorded refusals, oldest first. */
export async function failedServiceRequests(deps: Deps, identityId: string): Promise<FailedServiceRequest[]> {
  return (await read(deps, identityId)).failures;
}

/** Records a refusal, dropping the oldest beyond the bound (retried when another refusal was recorded meanwhile). */
export async function recordFailedServiceRequest(
  deps: Deps,
  identityId: string,
  failure: FailedServiceRequest,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const stored = await read(deps, identityId);
    const failures = [...stored.failures, failure].slice(-MAX_FAILED_REQUESTS);
    let text = JSON.stringify(failures);
    while (failures.length > 1 && Buffer.byteLength(text, 'utf8') > MAX_RECORD_BYTES) {
      failures.shift();
      text = JSON.stringify(failures);
    }
    try {
      const item = {
        ...failedKey(identityId),
        failures: text,
        expiresAtEpoch: Math.ceil((deps.now().getTime() + TTL_MS) / 1000),
      };
      await deps.store.transact([
        versionedPutOp(
          deps.store,
          item,
          stored.version,
          () => new ConcurrentModificationError('SERVER_TOO_MANY_REQUESTS', { message: 'Recorded meanwhile; retry.' }),
        ),
      ]);
      return;
    } catch (error) {
      if (!(error instanceof ConcurrentModificationError) || attempt >= 4) throw error;
    }
  }
}
