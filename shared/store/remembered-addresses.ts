import { createHash } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Store } from './entity-store.ts';
import { keys } from './keys.ts';
import { readOptions } from './read-consistency.ts';
import { itemOps, type WriteOp } from './write-op.ts';

/**
 * The addresses that logged in as a subject (`shared/rate-limit/remembered-addresses.ts`): one small item per
 * (subject, address), expiring through the table's TTL attribute. The pair is hashed, so usernames and addresses stay
 * out of the table and any input makes a key DynamoDB accepts.
 */

/** A subject (a username, an identity) and an address, in a scope of its own per kind of subject. */
export interface AddressPair {
  readonly scope: string;
  readonly subject: string;
  readonly address: string;
}

/** When the pair was last remembered and until when it is (epoch seconds). */
export interface RememberedStamp {
  readonly refreshedAtEpoch: number;
  readonly expiresAtEpoch: number;
}

function pairKey(pair: AddressPair) {
  const digest = createHash('sha256').update(`${pair.subject}\n${pair.address}`).digest('base64url');
  return keys.rememberedAddress(pair.scope, digest);
}

/** The pair's stamp, if it was ever remembered (its expiry may have passed: TTL removes items late). */
export async function readRememberedStamp(store: Store, pair: AddressPair): Promise<RememberedStamp | undefined> {
  const { Item } = await store.db.send(
    new GetCommand({ TableName: store.tableName, Key: pairKey(pair), ...readOptions('rememberedAddress') }),
  );
  if (!Item) return undefined;
  return { refreshedAtEpoch: Number(Item.refreshedAtEpoch ?? 0), expiresAtEpoch: Number(Item.expiresAtEpoch ?? 0) };
}

/** The write that (re)stamps the pair. */
export function rememberedStampOp(tableName: string, pair: AddressPair, stamp: RememberedStamp): WriteOp {
  return itemOps.put(tableName, { ...pairKey(pair), ...stamp });
}
