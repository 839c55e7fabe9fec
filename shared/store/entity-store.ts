import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import type { BaseDocument, EntityDefinition, Reference, UniqueKey } from '../entities/entity-definition.ts';
import { ApiError, invalidField } from '../http/api-error.ts';
import { COUNTER_SHARDS, documentOf, fitsKey, keys } from './keys.ts';
import type { WriteOp } from './write-op.ts';

/** A document as read from the table, with the version its next write must match. */
export interface Stored<D> {
  readonly doc: D;
  readonly version: number;
}

/** DynamoDB's limit on the items of one transaction. */
export const MAX_TRANSACTION_ITEMS = 100;
const CONFLICT_RETRIES = 6;
/** How often a batch request is sent again for what DynamoDB left unprocessed (throttling) before giving up. */
const BATCH_ATTEMPTS = 6;

/** Jittered exponential back-off between retries: 10, 20, 40 … ms, each from half to one and a half of that. */
function backOff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt * (0.5 + Math.random())));
}

function fieldValue(doc: BaseDocument, field: string): string | undefined {
  const value = (doc as unknown as Record<string, unknown>)[field];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Every uniqueness rule of a type: its unique fields (duplicates name the field) and its computed unique keys. */
function uniqueKeysOf<D extends BaseDocument>(def: EntityDefinition<D>): readonly UniqueKey<D>[] {
  const fields = def.unique.map(
    (field): UniqueKey<D> => ({
      name: field,
      valueOf: (doc) => fieldValue(doc, field),
      conflict: (value) =>
        invalidField(field, `duplicate value '${value}' in unique index on ${def.collection} store`, value),
    }),
  );
  return [...fields, ...(def.uniqueKeys ?? [])];
}

function referenceValue<D extends BaseDocument>(doc: D, reference: Reference<D>): string | undefined {
  const value = doc[reference.field];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Where an entity's tracked reference is recorded: under the target, so the target can find what points at it. */
function linkKey<D extends BaseDocument>(
  def: EntityDefinition<D>,
  reference: Reference<D>,
  target: string,
  id: string,
) {
  return { PK: keys.entity(reference.collection, target).PK, SK: `REFBY#${def.collection}#${id}#${reference.field}` };
}

function roleAttributesOf<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): Set<string> {
  const field = def.roleAttributesField;
  const value = field ? doc[field] : undefined;
  return new Set(Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);
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
    if (!fitsKey(id)) return undefined;
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.entity(def.collection, id), ConsistentRead: true }),
    );
    if (!Item) return undefined;
    return { doc: def.schema.parse(documentOf(Item)), version: Number(Item.version ?? 0) };
  }

  /** The id of the entity holding a unique value, from its marker item. */
  async findIdByUnique<D extends BaseDocument>(
    def: EntityDefinition<D>,
    field: keyof D & string,
    value: string,
  ): Promise<string | undefined> {
    if (!fitsKey(value)) return undefined;
    const { Item } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: keys.unique(def.collection, field, value),
        ConsistentRead: true,
      }),
    );
    return typeof Item?.entityId === 'string' ? Item.entityId : undefined;
  }

  /**
   * The writes that create an entity: the item (must not exist), its unique markers, its references and its type
   * counter. `unchecked` names reference fields whose target is written in the same transaction (a child created
   * with its parent), which DynamoDB does not let one transaction both write and check.
   */
  createOps<D extends BaseDocument>(
    def: EntityDefinition<D>,
    doc: D,
    unchecked: readonly (keyof D & string)[] = [],
  ): WriteOp[] {
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
    for (const key of uniqueKeysOf(def)) {
      const value = key.valueOf(parsed);
      if (value !== undefined) ops.push(this.putMarker(def, key, value, parsed.id));
    }
    for (const reference of def.references ?? []) {
      const target = referenceValue(parsed, reference);
      if (target === undefined) continue;
      const { check, link } = this.referenceOps(def, reference, target, parsed.id);
      if (!unchecked.includes(reference.field)) ops.push(check);
      if (link) ops.push(link);
    }
    for (const attribute of roleAttributesOf(def, parsed)) ops.push(...this.addRoleOps(def, attribute, parsed.id));
    ops.push({ item: { Put: { TableName: this.tableName, Item: keys.idOrder(def.collection, parsed.id) } } });
    ops.push(this.countOp(def, 1));
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
        onConditionFailed: concurrentlyModified(def),
      },
    ];
    for (const key of uniqueKeysOf(def)) {
      const old = key.valueOf(before.doc);
      const next = key.valueOf(parsed);
      if (old === next) continue;
      if (old !== undefined) ops.push(this.deleteMarker(def, key.name, old));
      if (next !== undefined) ops.push(this.putMarker(def, key, next, parsed.id));
    }
    for (const reference of def.references ?? []) {
      const old = referenceValue(before.doc, reference);
      const next = referenceValue(parsed, reference);
      if (old === next) continue;
      if (old !== undefined && reference.tracked) ops.push(this.deleteLink(def, reference, old, parsed.id));
      if (next === undefined) continue;
      const { check, link } = this.referenceOps(def, reference, next, parsed.id);
      ops.push(check, ...(link ? [link] : []));
    }
    const oldRoles = roleAttributesOf(def, before.doc);
    const newRoles = roleAttributesOf(def, parsed);
    for (const attribute of oldRoles)
      if (!newRoles.has(attribute)) ops.push(this.removeRoleOp(def, attribute, parsed.id));
    for (const attribute of newRoles)
      if (!oldRoles.has(attribute)) ops.push(...this.addRoleOps(def, attribute, parsed.id));
    return ops;
  }

  /**
   * The writes that delete an entity with its markers, links and counter; version-checked when `version` is given
   * (a cascade from a parent deletes its children whatever their version).
   */
  deleteOps<D extends BaseDocument>(def: EntityDefinition<D>, doc: D, version?: number): WriteOp[] {
    const key = keys.entity(def.collection, doc.id);
    const ops: WriteOp[] = [
      version === undefined
        ? { item: { Delete: { TableName: this.tableName, Key: key } } }
        : {
            item: {
              Delete: {
                TableName: this.tableName,
                Key: key,
                ConditionExpression: 'version = :version',
                ExpressionAttributeValues: { ':version': version },
              },
            },
            onConditionFailed: concurrentlyModified(def),
          },
    ];
    for (const key of uniqueKeysOf(def)) {
      const value = key.valueOf(doc);
      if (value !== undefined) ops.push(this.deleteMarker(def, key.name, value));
    }
    for (const reference of def.references ?? []) {
      const target = referenceValue(doc, reference);
      if (target !== undefined && reference.tracked) ops.push(this.deleteLink(def, reference, target, doc.id));
    }
    for (const attribute of roleAttributesOf(def, doc)) ops.push(this.removeRoleOp(def, attribute, doc.id));
    ops.push({ item: { Delete: { TableName: this.tableName, Key: keys.idOrder(def.collection, doc.id) } } });
    ops.push(this.countOp(def, -1));
    return ops;
  }

  /** Several entities by id (strongly consistent, 100 per request); missing ids are left out, order is kept. */
  async getMany<D extends BaseDocument>(def: EntityDefinition<D>, ids: readonly string[]): Promise<D[]> {
    // BatchGetItem refuses duplicate keys, and keys too long for DynamoDB name nothing.
    const storable = [...new Set(ids)].filter(fitsKey);
    const found = new Map<string, D>();
    for (let i = 0; i < storable.length; i += 100) {
      let keysLeft: Record<string, unknown>[] = storable.slice(i, i + 100).map((id) => keys.entity(def.collection, id));
      for (let attempt = 0; keysLeft.length > 0; attempt++) {
        if (attempt >= BATCH_ATTEMPTS)
          throw new Error(`DynamoDB left ${keysLeft.length} keys unread after ${attempt} tries`);
        if (attempt > 0) await backOff(attempt);
        const result = await this.db.send(
          new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: keysLeft, ConsistentRead: true } } }),
        );
        for (const item of result.Responses?.[this.tableName] ?? []) {
          const doc = def.schema.parse(documentOf(item));
          found.set(doc.id, doc);
        }
        keysLeft = (result.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Record<string, unknown>[];
      }
    }
    return storable.flatMap((id) => {
      const doc = found.get(id);
      return doc ? [doc] : [];
    });
  }

  /** A check, inside a transaction, that another entity exists (references). */
  existsOp(collection: string, id: string, onMissing: () => ApiError): WriteOp {
    // An id too long for a key names nothing; DynamoDB would refuse the whole transaction otherwise.
    if (!fitsKey(id)) throw onMissing();
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
  async transact(unmerged: readonly WriteOp[]): Promise<void> {
    await this.writeInAdvance(unmerged.filter((op) => op.advance));
    const ops = mergeCounters(
      this.tableName,
      unmerged.filter((op) => !op.advance),
    );
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
        await backOff(attempt);
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

  private referenceOps<D extends BaseDocument>(
    def: EntityDefinition<D>,
    reference: Reference<D>,
    target: string,
    id: string,
  ): { check: WriteOp; link: WriteOp | undefined } {
    const missing = () => invalidField(reference.field, `no ${reference.collection} found with id ${target}`, target);
    return {
      check: this.existsOp(reference.collection, target, missing),
      link: reference.tracked
        ? { item: { Put: { TableName: this.tableName, Item: linkKey(def, reference, target, id) } } }
        : undefined,
    };
  }

  private deleteLink<D extends BaseDocument>(
    def: EntityDefinition<D>,
    reference: Reference<D>,
    target: string,
    id: string,
  ): WriteOp {
    return { item: { Delete: { TableName: this.tableName, Key: linkKey(def, reference, target, id) } } };
  }

  private addRoleOps<D extends BaseDocument>(def: EntityDefinition<D>, attribute: string, id: string): WriteOp[] {
    return [
      { item: { Put: { TableName: this.tableName, Item: keys.roleMember(def.collection, attribute, id) } } },
      {
        item: { Put: { TableName: this.tableName, Item: keys.roleCatalog(def.collection, attribute) } },
        advance: true,
      },
    ];
  }

  private removeRoleOp<D extends BaseDocument>(def: EntityDefinition<D>, attribute: string, id: string): WriteOp {
    return { item: { Delete: { TableName: this.tableName, Key: keys.roleMember(def.collection, attribute, id) } } };
  }

  /** The idempotent Puts of `advance` ops, deduplicated, in batches of 25 (retrying what DynamoDB leaves over). */
  private async writeInAdvance(ops: readonly WriteOp[]): Promise<void> {
    const items = new Map<string, Record<string, unknown>>();
    for (const op of ops) {
      const item = op.item.Put?.Item;
      if (item) items.set(`${item.PK}|${item.SK}`, item);
    }
    const all = [...items.values()];
    for (let i = 0; i < all.length; i += 25) {
      let requests: Record<string, { PutRequest: { Item: Record<string, unknown> } }[]> | undefined = {
        [this.tableName]: all.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })),
      };
      for (let attempt = 0; requests && Object.keys(requests).length > 0; attempt++) {
        if (attempt >= BATCH_ATTEMPTS) throw new Error(`DynamoDB left items unwritten after ${attempt} tries`);
        if (attempt > 0) await backOff(attempt);
        const result = await this.db.send(new BatchWriteCommand({ RequestItems: requests }));
        requests = result.UnprocessedItems as typeof requests;
      }
    }
  }

  private putMarker<D extends BaseDocument>(
    def: EntityDefinition<D>,
    key: UniqueKey<D>,
    value: string,
    id: string,
  ): WriteOp {
    return {
      item: {
        Put: {
          TableName: this.tableName,
          Item: { ...keys.unique(def.collection, key.name, value), entityId: id },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      onConditionFailed: () => key.conflict(value),
    };
  }

  private deleteMarker<D extends BaseDocument>(def: EntityDefinition<D>, field: string, value: string): WriteOp {
    return { item: { Delete: { TableName: this.tableName, Key: keys.unique(def.collection, field, value) } } };
  }

  private countOp<D extends BaseDocument>(def: EntityDefinition<D>, delta: number): WriteOp {
    return { ...counterUpdate(this.tableName, def.collection, delta), counter: { collection: def.collection, delta } };
  }
}

function counterUpdate(tableName: string, collection: string, delta: number): WriteOp {
  return {
    item: {
      Update: {
        TableName: tableName,
        Key: keys.counter(collection, Math.floor(Math.random() * COUNTER_SHARDS)),
        UpdateExpression: 'ADD #count :delta',
        ExpressionAttributeNames: { '#count': 'count' },
        ExpressionAttributeValues: { ':delta': delta },
      },
    },
  };
}

/** One counter update per type (deltas summed), so a transaction never names the same counter shard twice. */
function mergeCounters(tableName: string, ops: readonly WriteOp[]): WriteOp[] {
  const deltas = new Map<string, number>();
  const others: WriteOp[] = [];
  for (const op of ops) {
    if (op.counter) deltas.set(op.counter.collection, (deltas.get(op.counter.collection) ?? 0) + op.counter.delta);
    else others.push(op);
  }
  for (const [collection, delta] of deltas) if (delta !== 0) others.push(counterUpdate(tableName, collection, delta));
  return others;
}

/** A version-checked write lost to a concurrent writer; the read-modify-write that made it may simply run again. */
export class ConcurrentModificationError extends ApiError {}

function concurrentlyModified<D extends BaseDocument>(def: EntityDefinition<D>): () => ApiError {
  return () =>
    new ConcurrentModificationError('SERVER_TOO_MANY_REQUESTS', {
      message: `The ${def.label} was changed by another request at the same time; retry.`,
    });
}
