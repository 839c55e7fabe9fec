import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { ApiError } from '../http/api-error.ts';

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
   * An idempotent Put made just before the transaction instead of inside it, for items that many concurrent writers
   * share (a role-attribute catalog entry): inside, they would make those writers' transactions conflict.
   */
  readonly advance?: boolean;
}
