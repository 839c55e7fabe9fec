import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type {
  BaseDocument,
  EntityDefinition,
  Reference,
  ReferenceField,
  Selector,
  UniqueKey,
} from '../entities/entity-definition.ts';
import { ApiError, invalidField } from '../errors/api-error.ts';
import type { Logger } from '../log/logger.ts';
import { mapBounded } from '../map-bounded.ts';
import { mergePackOps, packOp } from './filter-packs.ts';
import { COUNTER_SHARDS, documentOf, fitsKey, itemBytes, keys, MAX_KEY_VALUE_BYTES, storedAttributes } from './keys.ts';
import { addToCatalog, pruneCatalog } from './role-catalog.ts';
import type { TableClient } from './table-client.ts';
import type { WriteOp } from './write-op.ts';

/** A document as read from the table, with the version its next write must match. */
export interface Stored<D> {
  readonly doc: D;
  readonly version: number;
}

/** A selection item's key, the selector it comes from, and the id an `@id` role names. */
export interface SelectionKey {
  readonly key: { readonly PK: string; readonly SK: string };
  readonly selector: Selector<BaseDocument>;
  readonly namedId?: string;
}

/** A policy's selection items by `PK|SK`: one per distinct role of each selector field. */
export function selectionKeysOf<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): Map<string, SelectionKey> {
  const found = new Map<string, SelectionKey>();
  for (const selector of def.selects?.fields ?? []) {
    for (const role of (doc[selector.field] as readonly string[] | undefined) ?? []) {
      if (!fitsKey(role)) continue;
      const key = keys.selection(selector.collection, role, def.collection, doc.id);
      const namedId = role.startsWith('@') ? role.slice(1) : undefined;
      found.set(`${key.PK}|${key.SK}`, {
        key,
        selector: selector as unknown as Selector<BaseDocument>,
        ...(namedId !== undefined ? { namedId } : {}),
      });
    }
  }
  return found;
}

/** DynamoDB's limit on the items of one transaction. */
export const MAX_TRANSACTION_ITEMS = 100;
/** DynamoDB refuses items over 400 KB; what the kit writes stays under this, layout attributes included. */
export const MAX_ITEM_BYTES = 380 * 1024;
/**
 * How often a transaction cancelled by concurrent writers of the same items is sent again. Clients such as the ziti
 * CLI and Terraform do not retry, so a burst of a few dozen writers of one item must get through.
 */
const CONFLICT_ATTEMPTS = 12;
/** How many 100-key batch reads of one `batchGet` are in flight at once. */
const BATCH_CONCURRENCY = 16;
/** How often a batch request is sent again for what DynamoDB left unprocessed (throttling) before giving up. */
const BATCH_ATTEMPTS = 6;
/** After-commit requests (catalog entries) sent at once. */
const AFTER_COMMIT_CONCURRENCY = 8;
const BACK_OFF_BASE_MS = 10;
const BACK_OFF_CAP_MS = 400;
/**
 * How long a delete's mark holds off new links to the entity being deleted; a delete ends well within a function's
 * timeout, and a mark left by one that crashed stops counting after this.
 */
export const DELETE_MARK_MS = 60_000;

/**
 * Jittered exponential back-off before retry `attempt` (0-based): the ceiling doubles from `baseMs` (10 ms unless
 * given) up to 400 ms and the wait is drawn from its upper half, so concurrent losers spread out instead of colliding
 * again.
 */
export function backOff(attempt: number, baseMs = BACK_OFF_BASE_MS): Promise<void> {
  const ceiling = Math.min(BACK_OFF_CAP_MS, baseMs * 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, ceiling * (0.5 + Math.random() / 2)));
}

function fieldValue(doc: BaseDocument, field: string): string | undefined {
  const value = (doc as unknown as Record<string, unknown>)[field];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Every uniqueness rule of a type: its unique fields (duplicates name the field) and its computed unique keys. */
export function uniqueKeysOf<D extends BaseDocument>(def: EntityDefinition<D>): readonly UniqueKey<D>[] {
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

/**
 * The ids a reference holds: one for a string field, each distinct one for a list; empty values name nothing. A
 * dotted field is followed through nested objects; a missing or null object along the way holds none.
 */
export function referenceValues<D extends BaseDocument>(doc: D, reference: Reference<D>): string[] {
  let value: unknown = doc;
  for (const part of reference.field.split('.')) {
    const holder = value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};
    value = Object.hasOwn(holder, part) ? (holder as Record<string, unknown>)[part] : undefined;
  }
  const ids = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  return [...new Set(ids.filter((id): id is string => typeof id === 'string' && id !== ''))];
}

/**
 * Whether this is the write's first check of the target: two references may name the same entity (a policy's allowed
 * and required signer), and one transaction may not touch an item twice. Their links differ by field, so each is kept.
 */
function once<D extends BaseDocument>(checked: Set<string>, reference: Reference<D>, target: string): boolean {
  const key = `${reference.collection}#${target}`;
  if (checked.has(key)) return false;
  checked.add(key);
  return true;
}

/** Where a link is kept: in the target's partition, so the target's delete reads its links strongly consistently. */
export function linkKey<D extends BaseDocument>(
  def: EntityDefinition<D>,
  reference: Reference<D>,
  target: string,
  id: string,
) {
  return { PK: keys.entity(reference.collection, target).PK, SK: `REFBY#${def.collection}#${id}#${reference.field}` };
}

export function roleAttributesOf<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): Set<string> {
  const field = def.roleAttributesField;
  const value = field ? doc[field] : undefined;
  return new Set(Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);
}

/**
 * What lists filter and sort on, and nothing else: the document's filterable fields (`def.filterable`; a dotted name
 * such as `tags.env` keeps its whole top-level field; an alias is resolved before filtering, so adds nothing) and role
 * attributes. Kept on the entity's id-order item, in step with every write: a write outside the kit that changes one
 * of these fields must update the record too.
 */
export function filterRecordOf<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): Record<string, unknown> {
  const source = doc as unknown as Record<string, unknown>;
  const record: Record<string, unknown> = { id: doc.id };
  const stored = Object.keys(def.filterable).filter((name) => typeof def.filterable[name] === 'string');
  const fields = [...stored, ...(def.roleAttributesField ? [def.roleAttributesField] : [])];
  for (const name of fields) {
    const field = name.split('.')[0]!;
    if (Object.hasOwn(source, field)) record[field] = source[field];
  }
  return record;
}

/** 400 for a change that would touch more items than one transaction may. */
export class TransactionTooLargeError extends ApiError {
  constructor(items: number) {
    super('COULD_NOT_VALIDATE', {
      message: `This change would write ${items} stored items at once; one change may write at most ${MAX_TRANSACTION_ITEMS}. Name fewer related entities.`,
      cause: {
        field: '(root)',
        reason: `the change needs ${items} items in one transaction (at most ${MAX_TRANSACTION_ITEMS})`,
        value: items,
      },
    });
  }
}

/** 400 naming the largest field of an entity too large for one DynamoDB item. */
function tooLarge(label: string, attributes: Readonly<Record<string, unknown>>, bytes: number): ApiError {
  const [largest = '(root)'] = Object.entries(attributes)
    .map(([field, value]) => [field, itemBytes({ value })] as const)
    .sort((a, b) => b[1] - a[1])
    .map(([field]) => field);
  return invalidField(
    largest,
    `the ${label} would take ${bytes} bytes stored, more than the ${MAX_ITEM_BYTES} one item may hold; ${largest} is its largest field`,
    null,
  );
}

/** The single-table store: entity items, unique-value markers and per-type counters, always written together. */
export class Store implements TableClient {
  readonly db: DynamoDBDocumentClient;
  readonly tableName: string;
  private readonly logger: Pick<Logger, 'warn'> | undefined;

  constructor(db: DynamoDBDocumentClient, tableName: string, logger?: Pick<Logger, 'warn'>) {
    this.db = db;
    this.tableName = tableName;
    this.logger = logger;
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
   * The writes that create an entity: the item (must not exist), its unique markers, its references (checked and
   * linked, see `Reference`), its role-attribute index items and its type counter. `unchecked` names reference fields
   * whose target is written in the same transaction (a child created with its parent), which DynamoDB does not let
   * one transaction both write and check.
   */
  createOps<D extends BaseDocument>(
    def: EntityDefinition<D>,
    doc: D,
    unchecked: readonly ReferenceField<D>[] = [],
  ): WriteOp[] {
    const parsed = def.schema.parse(doc);
    const ops: WriteOp[] = [
      {
        item: { Put: { ...this.entityPut(def, parsed, 1), ConditionExpression: 'attribute_not_exists(PK)' } },
        onConditionFailed: () => invalidField('id', `an ${def.label} with this id already exists`, parsed.id),
      },
    ];
    for (const key of uniqueKeysOf(def)) {
      const value = key.valueOf(parsed);
      if (value !== undefined) ops.push(this.putMarker(def, key, value, parsed.id));
    }
    const checked = new Set<string>();
    for (const reference of def.references ?? []) {
      for (const target of referenceValues(parsed, reference)) {
        const check = !unchecked.includes(reference.field) && once(checked, reference, target);
        ops.push(...this.addReferenceOps(def, reference, target, parsed.id, check));
      }
    }
    for (const attribute of roleAttributesOf(def, parsed)) ops.push(this.addRoleOp(def, attribute, parsed.id));
    ops.push(...this.selectionOps(def, undefined, parsed));
    ops.push(this.idOrderPut(def, parsed));
    ops.push(packOp(def.collection, parsed.id, filterRecordOf(def, parsed)));
    ops.push(this.countOp(def, 1));
    ops.push(...markerOps(this.tableName, def, [parsed]));
    return ops;
  }

  /** The writes that replace a stored entity with `after`: version-checked, markers and links moved when they change. */
  replaceOps<D extends BaseDocument>(def: EntityDefinition<D>, before: Stored<D>, after: D): WriteOp[] {
    const parsed = def.schema.parse(after);
    const ops: WriteOp[] = [
      {
        item: {
          Put: {
            ...this.entityPut(def, parsed, before.version + 1),
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
    const checked = new Set<string>();
    for (const reference of def.references ?? []) {
      const old = new Set(referenceValues(before.doc, reference));
      const next = new Set(referenceValues(parsed, reference));
      for (const target of old) {
        if (!next.has(target) && reference.onTargetDelete !== 'none') {
          ops.push(this.deleteLink(def, reference, target, parsed.id));
        }
      }
      for (const target of next) {
        if (!old.has(target)) {
          ops.push(...this.addReferenceOps(def, reference, target, parsed.id, once(checked, reference, target)));
        }
      }
    }
    const oldRoles = roleAttributesOf(def, before.doc);
    const newRoles = roleAttributesOf(def, parsed);
    for (const attribute of oldRoles)
      if (!newRoles.has(attribute)) ops.push(this.removeRoleOp(def, attribute, parsed.id));
    for (const attribute of newRoles) if (!oldRoles.has(attribute)) ops.push(this.addRoleOp(def, attribute, parsed.id));
    ops.push(...this.selectionOps(def, before.doc, parsed));
    ops.push(this.idOrderPut(def, parsed));
    ops.push(packOp(def.collection, parsed.id, filterRecordOf(def, parsed)));
    ops.push(...markerOps(this.tableName, def, [before.doc, parsed]));
    return ops;
  }

  /**
   * The writes that delete an entity with its markers, links and counter; version-checked when `version` is given
   * (a cascade from a parent deletes its children whatever their version). Deleting an entity others may point at
   * goes through `deleteEntity`, which checks its links first.
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
      if (reference.onTargetDelete === 'none') continue;
      for (const target of referenceValues(doc, reference)) ops.push(this.deleteLink(def, reference, target, doc.id));
    }
    for (const attribute of roleAttributesOf(def, doc)) ops.push(this.removeRoleOp(def, attribute, doc.id));
    ops.push(...this.selectionOps(def, doc, undefined));
    ops.push({ item: { Delete: { TableName: this.tableName, Key: keys.idOrder(def.collection, doc.id) } } });
    ops.push(packOp(def.collection, doc.id, undefined));
    ops.push(this.countOp(def, -1));
    ops.push(...markerOps(this.tableName, def, [doc]));
    for (const marker of def.ownChangeMarker ? [def.ownChangeMarker(doc)] : []) {
      ops.push({ ...markerMove(this.tableName, marker), changeMarker: marker, changeMarkerEnds: true });
    }
    return ops;
  }

  /**
   * Marks an entity as being deleted (version-checked, so it also detects a concurrent change): from now until the
   * delete commits, no transaction can add a link to it. Returns the version the delete must then match.
   */
  async markDeleting<D extends BaseDocument>(def: EntityDefinition<D>, stored: Stored<D>): Promise<number> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.entity(def.collection, stored.doc.id),
          UpdateExpression: 'SET deletingUntil = :until ADD version :one',
          ConditionExpression: 'version = :version',
          ExpressionAttributeValues: {
            ':until': new Date(Date.now() + DELETE_MARK_MS).toISOString(),
            ':one': 1,
            ':version': stored.version,
          },
        }),
      );
    } catch (error) {
      if ((error as { name?: string }).name === 'ConditionalCheckFailedException') throw concurrentlyModified(def)();
      throw error;
    }
    return stored.version + 1;
  }

  /** Clears the mark of a delete that did not happen; a no-op if the entity changed or went meanwhile. */
  async unmarkDeleting<D extends BaseDocument>(def: EntityDefinition<D>, id: string, version: number): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.entity(def.collection, id),
          UpdateExpression: 'REMOVE deletingUntil',
          ConditionExpression: 'version = :version',
          ExpressionAttributeValues: { ':version': version },
        }),
      );
    } catch (error) {
      if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
    }
  }

  /** Several entities by id (strongly consistent, 100 per request); missing ids are left out, order is kept. */
  async getMany<D extends BaseDocument>(def: EntityDefinition<D>, ids: readonly string[]): Promise<D[]> {
    return (await this.getManyStored(def, ids)).map((stored) => stored.doc);
  }

  /** As `getMany`, with each entity's version, for writes conditioned on what was read. */
  async getManyStored<D extends BaseDocument>(def: EntityDefinition<D>, ids: readonly string[]): Promise<Stored<D>[]> {
    // BatchGetItem refuses duplicate keys, and keys too long for DynamoDB name nothing.
    const storable = [...new Set(ids)].filter(fitsKey);
    const items = await this.batchGet(storable.map((id) => keys.entity(def.collection, id)));
    const found = new Map(
      items.map((item) => {
        const doc = def.schema.parse(documentOf(item));
        return [doc.id, { doc, version: Number(item.version ?? 0) }];
      }),
    );
    return storable.flatMap((id) => {
      const stored = found.get(id);
      return stored ? [stored] : [];
    });
  }

  /**
   * The items of these (distinct) keys, read strongly consistently, 100 per request, with what DynamoDB leaves
   * unprocessed (throttling) sent again; keys of items that do not exist are left out, in no particular order.
   * `projection` narrows the items.
   */
  async batchGet(
    itemKeys: readonly Record<string, unknown>[],
    projection?: string,
  ): Promise<Record<string, unknown>[]> {
    const chunks: Record<string, unknown>[][] = [];
    for (let i = 0; i < itemKeys.length; i += 100) chunks.push(itemKeys.slice(i, i + 100));
    // The chunks go out together (bounded), so reading a thousand keys is one wave, not ten.
    const read = await mapBounded(chunks, BATCH_CONCURRENCY, (chunk) => this.batchGetChunk(chunk, projection));
    return read.flat();
  }

  private async batchGetChunk(chunk: readonly Record<string, unknown>[], projection?: string) {
    const items: Record<string, unknown>[] = [];
    let keysLeft = chunk;
    for (let attempt = 0; keysLeft.length > 0; attempt++) {
      if (attempt >= BATCH_ATTEMPTS)
        throw new Error(`DynamoDB left ${keysLeft.length} keys unread after ${attempt} tries`);
      if (attempt > 0) await backOff(attempt);
      const result = await this.db.send(
        new BatchGetCommand({
          RequestItems: {
            [this.tableName]: {
              Keys: [...keysLeft],
              ConsistentRead: true,
              ...(projection ? { ProjectionExpression: projection } : {}),
            },
          },
        }),
      );
      items.push(...(result.Responses?.[this.tableName] ?? []));
      keysLeft = (result.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Record<string, unknown>[];
    }
    return items;
  }

  /**
   * A check, inside a transaction, that another entity exists and is not being deleted (see `Reference`): what every
   * write that comes to point at an entity commits with.
   */
  existsOp(collection: string, id: string, onMissing: () => ApiError): WriteOp {
    // An id too long for a key names nothing; DynamoDB would refuse the whole transaction otherwise.
    if (!fitsKey(id)) throw onMissing();
    return {
      item: {
        ConditionCheck: {
          TableName: this.tableName,
          Key: keys.entity(collection, id),
          ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(deletingUntil) OR deletingUntil < :now)',
          ExpressionAttributeValues: { ':now': new Date().toISOString() },
        },
      },
      onConditionFailed: onMissing,
    };
  }

  /**
   * Moves change markers to now, each its own small update, a few at a time: for markers a write's own transaction
   * cannot name because finding them needs reads (the identity roles a service's policies grant it to).
   */
  async moveChangeMarkers(names: Iterable<string>): Promise<void> {
    await mapBounded([...new Set(names)], AFTER_COMMIT_CONCURRENCY, async (name) => {
      const update = markerMove(this.tableName, name).item.Update!;
      await this.db.send(new UpdateCommand(update as ConstructorParameters<typeof UpdateCommand>[0]));
    });
  }

  /**
   * Runs writes as one transaction, then their after-commit work. A change past DynamoDB's 100 items is refused (400)
   * before anything is sent. A cancelled condition becomes the API error its op names (or a retryable concurrent
   * modification); transaction conflicts with concurrent writers are retried with back-off, after which their
   * conditions decide (so of twenty concurrent creates of one name exactly one wins and the rest answer "duplicate").
   * After-commit work that fails is logged, not thrown: the change is committed, and an error would have the client
   * retry a create that already happened.
   */
  async transact(unmerged: readonly WriteOp[]): Promise<void> {
    const ops = mergeCounters(this.tableName, unmerged);
    if (ops.length > MAX_TRANSACTION_ITEMS) throw new TransactionTooLargeError(ops.length);
    if (ops.length > 0) await this.send(ops);
    const followUps = unmerged.flatMap((op) => (op.afterCommit ? [op.afterCommit] : []));
    await mapBounded(followUps, AFTER_COMMIT_CONCURRENCY, (followUp) =>
      followUp().catch((error: unknown) =>
        this.logger?.warn('after-commit work failed; the change itself is committed', {
          error: error instanceof Error ? error.message : String(error),
        }),
      ),
    );
  }

  private async send(ops: readonly WriteOp[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.db.send(new TransactWriteCommand({ TransactItems: ops.map((op) => op.item) }));
        return;
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) throw error;
        const reasons = error.CancellationReasons ?? [];
        const failed = reasons.findIndex((reason) => reason.Code === 'ConditionalCheckFailed');
        if (failed >= 0) {
          // A condition without its own error guarded state that another request changed meanwhile.
          throw ops[failed]?.onConditionFailed?.() ?? new ConcurrentModificationError('SERVER_TOO_MANY_REQUESTS');
        }
        const conflicted = reasons.some((reason) => reason.Code === 'TransactionConflict');
        if (!conflicted || attempt + 1 >= CONFLICT_ATTEMPTS) throw error;
        await backOff(attempt);
      }
    }
  }

  /**
   * The writes that bring an entity's filter record (id-order item and filter pack) in step with `doc`: for the few
   * writes outside the kit that change a filterable field (a lockout's disable, a login's `updatedAt`).
   */
  filterRecordOps<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): WriteOp[] {
    return [this.idOrderPut(def, doc), packOp(def.collection, doc.id, filterRecordOf(def, doc))];
  }

  /**
   * The entity's id-order item, carrying its filter record (`filterRecordOf`): lists whose filter pins nothing read
   * these small items instead of whole entities.
   */
  private idOrderPut<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): WriteOp {
    const record = storedAttributes(filterRecordOf(def, doc));
    return {
      item: { Put: { TableName: this.tableName, Item: { ...record, ...keys.idOrder(def.collection, doc.id) } } },
    };
  }

  /** An entity's Put: its layout keys, its document (structured fields as text) and version, refused if too large. */
  private entityPut<D extends BaseDocument>(def: EntityDefinition<D>, doc: D, version: number) {
    const attributes = storedAttributes(doc as unknown as Record<string, unknown>);
    const Item = { ...this.layout(def, doc), ...attributes, version };
    const bytes = itemBytes(Item);
    if (bytes > MAX_ITEM_BYTES) throw tooLarge(def.label, attributes, bytes);
    return { TableName: this.tableName, Item };
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

  /** The check that a target exists and takes links, and (unless its deletion is impossible) the link itself. */
  private addReferenceOps<D extends BaseDocument>(
    def: EntityDefinition<D>,
    reference: Reference<D>,
    target: string,
    id: string,
    check: boolean,
  ): WriteOp[] {
    const missing = () => invalidField(reference.field, `no ${reference.collection} found with id ${target}`, target);
    const ops = check ? [this.existsOp(reference.collection, target, missing)] : [];
    if (!fitsKey(target)) throw missing();
    if (reference.onTargetDelete !== 'none') {
      const Item = { ...linkKey(def, reference, target, id), onTargetDelete: reference.onTargetDelete };
      ops.push({ item: { Put: { TableName: this.tableName, Item } } });
    }
    return ops;
  }

  private deleteLink<D extends BaseDocument>(
    def: EntityDefinition<D>,
    reference: Reference<D>,
    target: string,
    id: string,
  ): WriteOp {
    return { item: { Delete: { TableName: this.tableName, Key: linkKey(def, reference, target, id) } } };
  }

  /**
   * The selection items of a policy (see `Selections`) that move from `before` to `after` (either may be absent: a
   * create or a delete): all of them when the evaluation record changed, else only the roles added or removed; and
   * a check that each `@id` newly named exists.
   */
  private selectionOps<D extends BaseDocument>(
    def: EntityDefinition<D>,
    before: D | undefined,
    after: D | undefined,
  ): WriteOp[] {
    const selections = def.selects;
    if (!selections) return [];
    const oldItems = before ? selectionKeysOf(def, before) : new Map<string, SelectionKey>();
    const newItems = after ? selectionKeysOf(def, after) : new Map<string, SelectionKey>();
    const record = after ? storedAttributes(selections.recordOf(after)) : undefined;
    const recordChanged =
      !before || !after || JSON.stringify(selections.recordOf(before)) !== JSON.stringify(selections.recordOf(after));
    const ops: WriteOp[] = [];
    for (const [name, key] of oldItems) {
      if (!newItems.has(name)) ops.push({ item: { Delete: { TableName: this.tableName, Key: key.key } } });
    }
    const checked = new Set<string>();
    for (const [name, key] of newItems) {
      if (!recordChanged && oldItems.has(name)) continue;
      if (key.namedId !== undefined && !oldItems.has(name) && !checked.has(name)) {
        checked.add(name);
        const { field, plural } = key.selector;
        ops.push(
          this.existsOp(key.selector.collection, key.namedId, () =>
            invalidField(field, `no ${plural} found with the given ids`, after?.[field]),
          ),
        );
      }
      const item = { ...record, ...key.key, policyId: after?.id, policyCollection: def.collection };
      ops.push({ item: { Put: { TableName: this.tableName, Item: item } } });
    }
    return ops;
  }

  private addRoleOp<D extends BaseDocument>(def: EntityDefinition<D>, attribute: string, id: string): WriteOp {
    return {
      item: { Put: { TableName: this.tableName, Item: keys.roleMember(def.collection, attribute, id) } },
      afterCommit: () => addToCatalog(this, def.collection, attribute),
    };
  }

  private removeRoleOp<D extends BaseDocument>(def: EntityDefinition<D>, attribute: string, id: string): WriteOp {
    return {
      item: { Delete: { TableName: this.tableName, Key: keys.roleMember(def.collection, attribute, id) } },
      afterCommit: () => pruneCatalog(this, def.collection, attribute),
    };
  }

  private putMarker<D extends BaseDocument>(
    def: EntityDefinition<D>,
    key: UniqueKey<D>,
    value: string,
    id: string,
  ): WriteOp {
    // A marker's value is part of its key: one DynamoDB cannot hold is the caller's 400, on every path that writes one
    // (an identity's externalId from a certificate or JWT claim, a name, a fingerprint), never a 500.
    if (!fitsKey(value)) {
      throw invalidField(key.name, `must be at most ${MAX_KEY_VALUE_BYTES} bytes to be unique`, value.slice(0, 64));
    }
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
    return counterOp(this.tableName, def.collection, delta);
  }
}

/** A move of a type's counter by `delta`, tagged so `transact` merges it with the transaction's others. */
export function counterOp(tableName: string, collection: string, delta: number): WriteOp {
  return { ...counterUpdate(tableName, collection, delta), counter: { collection, delta } };
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

/**
 * One counter update per type (deltas summed), one move per change marker and one update per filter pack, so a
 * transaction never names the same item twice.
 */
function mergeCounters(tableName: string, ops: readonly WriteOp[]): WriteOp[] {
  const deltas = new Map<string, number>();
  const markers = new Set<string>();
  const endedMarkers = new Set<string>();
  const others: WriteOp[] = [];
  for (const op of ops) {
    if (op.counter) deltas.set(op.counter.collection, (deltas.get(op.counter.collection) ?? 0) + op.counter.delta);
    else if (op.changeMarker !== undefined) (op.changeMarkerEnds ? endedMarkers : markers).add(op.changeMarker);
    else if (!op.filterPack) others.push(op);
  }
  others.push(...mergePackOps(tableName, ops));
  for (const [collection, delta] of deltas) if (delta !== 0) others.push(counterUpdate(tableName, collection, delta));
  for (const marker of markers) if (!endedMarkers.has(marker)) others.push(markerMove(tableName, marker));
  for (const marker of endedMarkers) {
    others.push({ item: { Delete: { TableName: tableName, Key: keys.changeMarker(marker) } } });
  }
  return others;
}

/**
 * The change-marker moves a write of `def` makes (see `EntityDefinition.changeMarkers`): those of every version of the
 * document the write touches (before and after a replace), each once.
 */
export function markerOps<D extends BaseDocument>(
  tableName: string,
  def: EntityDefinition<D>,
  docs: readonly D[],
): WriteOp[] {
  const declared = def.changeMarkers;
  if (!declared) return [];
  const names = new Set(typeof declared === 'function' ? docs.flatMap((doc) => declared(doc)) : declared);
  return [...names].map((marker) => ({ ...markerMove(tableName, marker), changeMarker: marker }));
}

/**
 * Sets a change marker to now. Markers are scoped (an identity role, or the one global marker moved only by rare
 * config type changes), so concurrent writers seldom share one.
 */
export function markerMove(tableName: string, marker: string): WriteOp {
  return {
    item: {
      Update: {
        TableName: tableName,
        Key: keys.changeMarker(marker),
        UpdateExpression: 'SET changedAt = :now',
        ExpressionAttributeValues: { ':now': new Date().toISOString() },
      },
    },
  };
}

/** A version-checked write lost to a concurrent writer; the read-modify-write that made it may simply run again. */
export class ConcurrentModificationError extends ApiError {}

function concurrentlyModified<D extends BaseDocument>(def: EntityDefinition<D>): () => ApiError {
  return () =>
    new ConcurrentModificationError('SERVER_TOO_MANY_REQUESTS', {
      message: `The ${def.label} was changed by another request at the same time; retry.`,
    });
}
