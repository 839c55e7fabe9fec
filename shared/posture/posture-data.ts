import * as z from 'zod';
import type { Deps } from '../ports/deps.ts';
import { ConcurrentModificationError, MAX_TRANSACTION_ITEMS } from '../store/entity-store.ts';
import { itemsInIndexPartition } from '../store/index-queries.ts';
import { fitsKey, keys } from '../store/keys.ts';
import { parseStoredJson } from '../store/stored-json.ts';
import { deleteItemOp, readItem, versionedPutOp } from '../store/versioned-items.ts';
import type { WriteOp } from '../store/write-op.ts';

/**
 * What an endpoint reported about itself (posture responses) and when it passed MFA, kept per API session: one item
 * `POSTURE#<apiSessionId>` / `DATA`, so evaluating a caller's posture is one strongly consistent read. Its write also
 * flags the API session (`markHasPostureOp`), and ending a flagged API session removes the data once that commits
 * (`removePostureData`, run by `api-session-store.ts`). The data is volatile, as in the reference (which keeps it in
 * memory): every write also moves a TTL backstop (`expiresAtEpoch`) for API sessions that DynamoDB's TTL removed
 * without their posture data. The item sits in GSI2 under
 * `identities#<id>#posture`, so an identity's data (getIdentityPostureData) is one query.
 *
 * The reference keeps domain, MAC, OS and processes per identity and only MFA and the endpoint state per API session;
 * here all of it is per API session (an SDK reports its posture after each login anyway), and the identity's view
 * takes the latest of each kind over its API sessions.
 */

const postureKey = keys.postureData;
export const posturePartition = (identityId: string) => `identities#${identityId}#posture`;

/** How long after its last write DynamoDB's TTL removes posture data nobody removed (a backstop, see above). */
const TTL_BACKSTOP_MS = 8 * 24 * 60 * 60_000;

/** Most process reports kept per API session (by check and by path). */
export const MAX_PROCESSES = 100;

const at = z.string();
const processDataSchema = z.object({
  postureCheckId: z.string(),
  path: z.string(),
  isRunning: z.boolean(),
  hash: z.string(),
  signerFingerprints: z.array(z.string()),
  lastUpdatedAt: at,
});
export type ProcessData = z.infer<typeof processDataSchema>;

export const postureDataSchema = z.object({
  domain: z.object({ postureCheckId: z.string(), name: z.string(), lastUpdatedAt: at }).optional(),
  mac: z.object({ postureCheckId: z.string(), addresses: z.array(z.string()), lastUpdatedAt: at }).optional(),
  os: z
    .object({ postureCheckId: z.string(), type: z.string(), version: z.string(), build: z.string(), lastUpdatedAt: at })
    .optional(),
  /** PROCESS reports by posture check (the reference's `Processes`). */
  processes: z.array(processDataSchema).default([]),
  /** The latest report of each path (the reference's `ProcessPathMap`, read by PROCESS_MULTI checks). */
  processPaths: z.array(processDataSchema).default([]),
  endpointState: z.object({ wokenAt: at.optional(), unlockedAt: at.optional() }).optional(),
  mfa: z.object({ passedAt: at.optional() }).optional(),
});
export type PostureData = z.infer<typeof postureDataSchema>;

export const EMPTY_POSTURE_DATA: PostureData = { processes: [], processPaths: [] };

/** An API session's posture data as stored, with the item version its write is conditioned on. */
export interface StoredPostureData {
  readonly data: PostureData;
  readonly version: number;
  readonly apiSessionId: string;
  readonly lastUpdatedAt?: string;
}

function fromItem(item: Record<string, unknown>): StoredPostureData {
  const data = parseStoredJson(item.data, postureDataSchema, EMPTY_POSTURE_DATA);
  return {
    data,
    version: Number(item.version ?? 0),
    apiSessionId: String(item.apiSessionId),
    ...(typeof item.updatedAt === 'string' ? { lastUpdatedAt: item.updatedAt } : {}),
  };
}

/** The caller's posture data (one strongly consistent read); empty when the endpoint has reported nothing. */
export async function readPostureData(deps: Deps, apiSessionId: string): Promise<StoredPostureData> {
  if (!fitsKey(apiSessionId)) return { data: EMPTY_POSTURE_DATA, version: 0, apiSessionId };
  const Item = await readItem(deps.store, postureKey(apiSessionId));
  return Item ? fromItem(Item) : { data: EMPTY_POSTURE_DATA, version: 0, apiSessionId };
}

/** The posture data of each of an identity's API sessions (one query; eventually consistent, for the admin view). */
export async function identityPostureData(deps: Deps, identityId: string): Promise<StoredPostureData[]> {
  return (await itemsInIndexPartition(deps.store, posturePartition(identityId))).map(fromItem);
}

/** The write that stores `data` for the API session, conditioned on the version read. */
export function postureDataPutOp(
  deps: Deps,
  owner: { readonly identityId: string; readonly apiSessionId: string },
  data: PostureData,
  readVersion: number,
): WriteOp {
  const now = deps.now();
  const item = {
    ...postureKey(owner.apiSessionId),
    GSI2PK: posturePartition(owner.identityId),
    GSI2SK: owner.apiSessionId,
    identityId: owner.identityId,
    apiSessionId: owner.apiSessionId,
    updatedAt: now.toISOString(),
    data: JSON.stringify(data),
    expiresAtEpoch: Math.ceil((now.getTime() + TTL_BACKSTOP_MS) / 1000),
  };
  return versionedPutOp(
    deps.store,
    item,
    readVersion,
    () =>
      new ConcurrentModificationError('SERVER_TOO_MANY_REQUESTS', {
        message: 'The posture data of this API session changed at the same time; retry.',
      }),
  );
}

/**
 * Removes the posture data of ended API sessions (after the transaction that ended them, see `api-session-store.ts`):
 * unconditional deletes, a transaction per hundred.
 */
export async function removePostureData(deps: Deps, apiSessionIds: readonly string[]): Promise<void> {
  const ids = [...new Set(apiSessionIds)].filter(fitsKey);
  for (let i = 0; i < ids.length; i += MAX_TRANSACTION_ITEMS) {
    await deps.store.transact(
      ids.slice(i, i + MAX_TRANSACTION_ITEMS).map((id) => deleteItemOp(deps.store, postureKey(id))),
    );
  }
}

/** Changes an API session's posture data: read, change, conditional write, again when another write came between. */
export async function updatePostureData(
  deps: Deps,
  owner: { readonly identityId: string; readonly apiSessionId: string },
  change: (data: PostureData) => PostureData,
  withOps: readonly WriteOp[] = [],
): Promise<PostureData> {
  for (let attempt = 0; ; attempt++) {
    const stored = await readPostureData(deps, owner.apiSessionId);
    const next = change(stored.data);
    try {
      await deps.store.transact([postureDataPutOp(deps, owner, next, stored.version), ...withOps]);
      return next;
    } catch (error) {
      if (!(error instanceof ConcurrentModificationError) || attempt >= 4) throw error;
    }
  }
}

/**
 * Records that the API session passed MFA now (for the MFA posture check): what the MFA operations call when a code
 * is verified on the session.
 */
export async function recordMfaPassed(
  deps: Deps,
  owner: { readonly identityId: string; readonly apiSessionId: string },
  withOps: readonly WriteOp[] = [],
): Promise<void> {
  const passedAt = deps.now().toISOString();
  await updatePostureData(deps, owner, (data) => ({ ...data, mfa: { passedAt } }), withOps);
}
