import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { ApiError } from '../http/api-error.ts';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** One item of a transaction, with the API error to answer when its condition is what cancelled it. */
export interface WriteOp {
  readonly item: TransactItem;
  readonly onConditionFailed?: () => ApiError;
}
