import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import { ApiError, invalidField } from '../http/api-error.ts';
import { keys, LAYOUT_ATTRIBUTES } from './keys.ts';
import type { WriteOp } from './write-op.ts';

/** A document as read from the table, with the version its next write must match. */
export interface Stored<D> {
  readonly doc: D;
  readonly version: number;
}

/** DynamoDB's limit on the items of one transaction. */
export const MAX_TRANSACTION_ITEMS = 100;
const CONFLICT_RETRIES = 4;

function stripLayout(item: Record<string, unknown>): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(item)) if (!LAYOUT_ATTRIBUTES.includes(key)) doc[key] = value;
  return doc;
}

function uniqueValue(doc: BaseDocument, field: string): string | undefined {
  const value = (doc as unknown as Record<string, unknown>)[field];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function duplicate<D extends BaseDocument>(def: EntityDefinition<D>, field: string, value: string): () => ApiError {
  return () => invalidField(field, `duplicate value '${value}' in unique index on ${def.collection} store`, value);
}

/** The single-table store: entity items, unique-value markers and per-type counters, always written together. */
export class Store {
  readonly db: DynamoDBDocumentClient;
  readonly tableName: string;

  constructor(db: DynamoDBDocumentClient, tableName: string) {
    this.db = db;
    this.tableName = tableName;
  }

  /** Reads one entity (strongly consistent); undefined when it does not exist. */
  async get<D extends BaseDocument>(def: EntityDefinition<D>, id: string): Promise<Stored<D> | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.entity(def.collection, id), ConsistentRead: true }),
    );
    if (!Item) return undefined;
    return { doc: def.schema.parse(stripLayout(Item)), version: Number(Item.version ?? 0) };
  }

  /** The id of the entity holding a unique value, from its marker item. */
  async findIdByUnique<D extends BaseDocument>(
    def: EntityDefinition<D>,
    field: keyof D & string,
    value: string,
  ): Promise<string | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: keys.unique(def.collection, field, value),
        ConsistentRead: true,
      }),
    );
    return typeof Item?.entityId === 'string' ? Item.entityId : undefined;
  }

  /** The writes that create an entity: the item (must not exist), its unique markers and its type counter. */
  createOps<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): WriteOp[] {
    const parsed = def.schema.parse(doc);
    const ops: WriteOp[] = [
      {
        item: {
          Put: {
            TableName: this.tableName,
            Item: { ...this.layout(def, parsed), ...parsed, version: 1 },
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
        onConditionFailed: () => invalidField('id', `an ${def.label} with this id already exists`, parsed.id),
      },
    ];
    for (const field of def.unique) {
      const value = uniqueValue(parsed, field);
      if (value !== undefined) ops.push(this.putMarker(def, field, value, parsed.id));
    }
    ops.push(this.count(def, 1));
    return ops;
  }

  /** The writes that replace a stored entity with `after`: version-checked, markers moved when values change. */
  replaceOps<D extends BaseDocument>(def: EntityDefinition<D>, before: Stored<D>, after: D): WriteOp[] {
    const parsed = def.schema.parse(after);
    const ops: WriteOp[] = [
      {
        item: {
          Put: {
            TableName: this.tableName,
            Item: { ...this.layout(def, parsed), ...parsed, version: before.version + 1 },
            ConditionExpression: 'version = :version',
            ExpressionAttributeValues: { ':version': before.version },
          },
        },
        onConditionFailed: () => new ApiError('SERVER_TOO_MANY_REQUESTS', { message: concurrentMessage(def) }),
      },
    ];
    for (const field of def.unique) {
      const old = uniqueValue(before.doc, field);
      const next = uniqueValue(parsed, field);
      if (old === next) continue;
      if (old !== undefined) ops.push(this.deleteMarker(def, field, old));
      if (next !== undefined) ops.push(this.putMarker(def, field, next, parsed.id));
    }
    return ops;
  }

  /** The writes that delete a stored entity (version-checked) with its markers and counter. */
  deleteOps<D extends BaseDocument>(def: EntityDefinition<D>, stored: Stored<D>): WriteOp[] {
    const ops: WriteOp[] = [
      {
        item: {
          Delete: {
            TableName: this.tableName,
            Key: keys.entity(def.collection, stored.doc.id),
            ConditionExpression: 'version = :version',
            ExpressionAttributeValues: { ':version': stored.version },
          },
        },
        onConditionFailed: () => new ApiError('SERVER_TOO_MANY_REQUESTS', { message: concurrentMessage(def) }),
      },
    ];
    for (const field of def.unique) {
      const value = uniqueValue(stored.doc, field);
      if (value !== undefined) ops.push(this.deleteMarker(def, field, value));
    }
    ops.push(this.count(def, -1));
    return ops;
  }

  /** A check, inside a transaction, that another entity exists (references). */
  existsOp(collection: string, id: string, onMissing: () => ApiError): WriteOp {
    return {
      item: {
        ConditionCheck: {
          TableName: this.tableName,
          Key: keys.entity(collection, id),
          ConditionExpression: 'attribute_exists(PK)',
        },
      },
      onConditionFailed: onMissing,
    };
  }

  /**
   * Runs writes as one transaction. A cancelled condition becomes the API error its op names; transaction conflicts
   * with concurrent writers are retried, after which their conditions decide (so of twenty concurrent creates of one
   * name exactly one wins and the rest answer "duplicate").
   */
  async transact(ops: readonly WriteOp[]): Promise<void> {
    if (ops.length === 0) return;
    if (ops.length > MAX_TRANSACTION_ITEMS) {
      throw new Error(`a transaction of ${ops.length} items exceeds DynamoDB's limit of ${MAX_TRANSACTION_ITEMS}`);
    }
    for (let attempt = 0; ; attempt++) {
      try {
        await this.db.send(new TransactWriteCommand({ TransactItems: ops.map((op) => op.item) }));
        return;
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) throw error;
        const reasons = error.CancellationReasons ?? [];
        const failed = reasons.findIndex((reason) => reason.Code === 'ConditionalCheckFailed');
        const mapped = failed >= 0 ? ops[failed]?.onConditionFailed : undefined;
        if (mapped) throw mapped();
        const conflicted = reasons.some((reason) => reason.Code === 'TransactionConflict');
        if (!conflicted || attempt >= CONFLICT_RETRIES) throw error;
        await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt * Math.random()));
      }
    }
  }

  private layout<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): Record<string, string> {
    const parent = def.parentOf?.(doc);
    return {
      ...keys.entity(def.collection, doc.id),
      GSI1PK: keys.typeIndex(def.collection),
      GSI1SK: doc.id,
      ...(parent
        ? { GSI2PK: keys.parentIndex(parent.collection, parent.id), GSI2SK: `${def.collection}#${doc.id}` }
        : {}),
    };
  }

  private putMarker<D extends BaseDocument>(
    def: EntityDefinition<D>,
    field: string,
    value: string,
    id: string,
  ): WriteOp {
    return {
      item: {
        Put: {
          TableName: this.tableName,
          Item: { ...keys.unique(def.collection, field, value), entityId: id },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      onConditionFailed: duplicate(def, field, value),
    };
  }

  private deleteMarker<D extends BaseDocument>(def: EntityDefinition<D>, field: string, value: string): WriteOp {
    return { item: { Delete: { TableName: this.tableName, Key: keys.unique(def.collection, field, value) } } };
  }

  private count<D extends BaseDocument>(def: EntityDefinition<D>, delta: number): WriteOp {
    return {
      item: {
        Update: {
          TableName: this.tableName,
          Key: keys.counter(def.collection),
          UpdateExpression: 'ADD #count :delta',
          ExpressionAttributeNames: { '#count': 'count' },
          ExpressionAttributeValues: { ':delta': delta },
        },
      },
    };
  }
}

function concurrentMessage<D extends BaseDocument>(def: EntityDefinition<D>): string {
  return `The ${def.label} was changed by another request at the same time; retry.`;
}
