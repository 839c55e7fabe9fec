import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { ApiError } from '../errors/api-error.ts';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** One item of a transaction, with the API error to answer when its condition is what cancelled it. */
export interface WriteOp {
  readonly item: TransactItem;
  readonly onConditionFailed?: () => ApiError;
  /**
   * Set on counter updates: one transaction may not touch an item twice, so the store merges the counter updates of
   * a transaction into one per type before sending it.
   */
  readonly counter?: { readonly collection: string; readonly delta: number };
  /**
   * Set on change-marker moves, merged the same way: one move per marker and transaction, folded into the
   * transaction's own write of the item that holds it (`change-markers.ts`).
   */
  readonly changeMarker?: string;
  /**
   * Set on the change of a field naming a live entity on another's item (`naming-field.ts`): merged into the
   * transaction's own write of that item, since one transaction may not touch an item twice.
   */
  readonly naming?: {
    readonly holder: { readonly collection: string; readonly id: string; readonly field: string };
    /** The id to set; undefined removes the field. */
    readonly value: string | undefined;
  };
  /**
   * Set on a routers' notice a transaction needs once however many of its writes make it (`SERVICES_NOTICE`): the
   * store keeps the first of each.
   */
  readonly notice?: string;
  /**
   * Work that follows a committed transaction and only then (a role-attribute catalog entry added or pruned): items
   * that many concurrent writers share would make their transactions conflict if written inside them, and a
   * transaction that fails must leave nothing behind.
   */
  readonly afterCommit?: () => Promise<void>;
}

/** An item's key. */
export interface ItemKey {
  readonly PK: unknown;
  readonly SK: unknown;
}

/**
 * Writes of whole items by key, for repairs that restore or remove what an entity implies (the integrity fix): a put
 * of the item, a removal (`ifStored`: only the item still there, so a write that made it current again stays), and a
 * check that an entity is still at the version a repair was planned from.
 */
export const itemOps = {
  put: (tableName: string, item: Record<string, unknown>): WriteOp => ({
    item: { Put: { TableName: tableName, Item: item } },
  }),
  remove: (tableName: string, key: ItemKey, options: { readonly ifStored?: boolean } = {}): WriteOp => ({
    item: {
      Delete: {
        TableName: tableName,
        Key: { PK: key.PK, SK: key.SK },
        ...(options.ifStored ? { ConditionExpression: 'attribute_exists(PK)' } : {}),
      },
    },
  }),
  versionIs: (tableName: string, key: ItemKey, version: number): WriteOp => ({
    item: {
      ConditionCheck: {
        TableName: tableName,
        Key: { PK: key.PK, SK: key.SK },
        ConditionExpression: 'version = :version',
        ExpressionAttributeValues: { ':version': version },
      },
    },
  }),
};

/** Whether a transaction was cancelled because it conflicted with another one writing the same items. */
export function conflictedWithAnotherTransaction(error: unknown): boolean {
  return (
    error instanceof TransactionCanceledException &&
    (error.CancellationReasons ?? []).some((reason) => reason.Code === 'TransactionConflict')
  );
}
