import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  TransactWriteCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { BaseDocument, EntityDefinition, Reference, ReferenceField } from '../entities/entity-definition.ts';
import { onceKeyOf } from '../entities/router-notice.ts';
import { ApiError, invalidField } from '../errors/api-error.ts';
import type { Logger } from '../log/logger.ts';
import { mapBounded } from '../map-bounded.ts';
import { markerMove, unwrittenIdentityKeys, withMarkerMoves } from './change-markers.ts';
import { ctrlChangeOp, type EndedSessions } from './ctrl-changes.ts';
import {
  derivedItemOps,
  documentIndexKeys,
  entityExistsOp,
  idOrderItemOf,
  itemKeyOf,
  referenceValues,
} from './derived-items.ts';
import { COUNTER_SHARDS, documentOf, fitsKey, itemBytes, keys, storedAttributes } from './keys.ts';
import { mergeNamings, namingOps, renamingOps } from './naming-field.ts';
import { type ReadKind, readOptions } from './read-consistency.ts';
import { isConditionFailure, type TableClient, unlessConditionFails } from './table-client.ts';
import { type ItemKey, itemOps, type WriteOp } from './write-op.ts';

/** A document as read from the table, with the version its next write must match. */
export interface Stored<D> {
  readonly doc: D;
  readonly version: number;
  /**
   * Stored fields this build does not know (written by a newer build): a replace writes them back, so running an older
   * build after a newer one (a rollback) never erases what the newer one wrote.
   */
  readonly unknownFields?: Readonly<Record<string, unknown>>;
}

/** Attributes of an entity item that are neither layout nor document: a delete's mark is never carried over. */
const NOT_CARRIED = new Set(['deletingUntil']);

/** An entity item as its document (parsed, so unknown fields are dropped from it), version and unknown fields. */
function storedOf<D extends BaseDocument>(
  def: EntityDefinition<D>,
  item: Readonly<Record<string, unknown>>,
): Stored<D> {
  const raw = documentOf(item);
  const doc = def.schema.parse(raw);
  const unknown = Object.entries(raw).filter(([field]) => !Object.hasOwn(doc, field) && !NOT_CARRIED.has(field));
  return {
    doc,
    version: Number(item.version ?? 0),
    ...(unknown.length > 0 ? { unknownFields: Object.fromEntries(unknown) } : {}),
  };
}

type Item = Record<string, unknown>;

/** A unique value's marker: the entity holding it, and what the type's markers carry beside its id. */
export interface UniqueMarker {
  readonly entityId: string;
  readonly carried: Readonly<Record<string, string>>;
}

/** A stored marker item as its holder and what it carries; undefined when there is none. */
export function uniqueMarkerOf(item: Readonly<Record<string, unknown>> | undefined): UniqueMarker | undefined {
  if (typeof item?.entityId !== 'string') return undefined;
  const carried = Object.entries(item).filter(
    ([name, held]) => !['PK', 'SK', 'entityId'].includes(name) && typeof held === 'string',
  ) as [string, string][];
  return { entityId: item.entityId, carried: Object.fromEntries(carried) };
}

/** An entity to read with others: its type and id. */
export interface EntityRef {
  // biome-ignore lint/suspicious/noExplicitAny: any entity type; the answer is typed per ref by DocOf.
  readonly def: EntityDefinition<any>;
  readonly id: string;
}

type DocOf<T> = T extends EntityDefinition<infer D> ? D : never;

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
  /**
   * What follows the commit of a transaction that ended sessions (its `ended` notice), in the request: the functions
   * that end sessions remove the first of them at once (`removeEndedSessionsOnCommit`), so an identity's few sessions
   * leave the table with the change; the sweep removes the rest, and everything when this is unset.
   */
  afterSessionsEnded: ((ended: EndedSessions) => Promise<void>) | undefined;
  /**
   * The instant a write's routers' notices carry: the controller's clock (`Deps.now`), which the endpoints' polls of the
   * change log read by. Wall time unless a composition root (a test's controller, whose clock it moves) sets its own:
   * a notice stamped by another clock than the poll's falls outside the poll's window and is never passed on.
   */
  now: () => Date = () => new Date();

  constructor(db: DynamoDBDocumentClient, tableName: string, logger?: Pick<Logger, 'warn'>) {
    this.db = db;
    this.tableName = tableName;
    this.logger = logger;
  }

  /**
   * Reads one entity (strongly consistent, `READS.entity`, unless `read` names an eventual kind); undefined when it
   * does not exist.
   */
  async get<D extends BaseDocument>(
    def: EntityDefinition<D>,
    id: string,
    read: ReadKind = 'entity',
  ): Promise<Stored<D> | undefined> {
    if (!fitsKey(id)) return undefined;
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.entity(def.collection, id), ...readOptions(read) }),
    );
    return Item ? storedOf(def, Item) : undefined;
  }

  /** The id of the entity holding a unique value, from its marker item. */
  async findIdByUnique<D extends BaseDocument>(
    def: EntityDefinition<D>,
    field: keyof D & string,
    value: string,
  ): Promise<string | undefined> {
    return (await this.findMarker(def, field, value))?.entityId;
  }

  /**
   * The marker of a unique value (strongly consistent): the entity's id and what the type's markers carry
   * (`markerCarries`; a marker written before its type carried them lacks them).
   */
  async findMarker<D extends BaseDocument>(
    def: EntityDefinition<D>,
    field: keyof D & string,
    value: string,
  ): Promise<UniqueMarker | undefined> {
    if (!fitsKey(value)) return undefined;
    const { Item } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: keys.unique(def.collection, field, value),
        ...readOptions('uniqueMarker'),
      }),
    );
    return uniqueMarkerOf(Item);
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
    const entity: WriteOp = {
      item: { Put: { ...this.entityPut(def, parsed, 1), ConditionExpression: 'attribute_not_exists(PK)' } },
      onConditionFailed: () => invalidField('id', `an ${def.label} with this id already exists`, parsed.id),
    };
    return [
      entity,
      ...this.referenceChecks(def, undefined, parsed, unchecked),
      ...derivedItemOps(this, def, undefined, parsed),
      this.countOp(def, 1),
      ...markerOps(this.tableName, def, [parsed]),
      ...namingOps(this.tableName, def, parsed, 'set'),
      ...this.routerNoticeOps(def, undefined, parsed),
    ];
  }

  /** The writes that replace a stored entity with `after`: version-checked, markers and links moved when they change. */
  replaceOps<D extends BaseDocument>(def: EntityDefinition<D>, before: Stored<D>, after: D): WriteOp[] {
    const parsed = def.schema.parse(after);
    const entity: WriteOp = {
      item: {
        Put: {
          ...this.entityPut(def, parsed, before.version + 1, before.unknownFields),
          ConditionExpression: 'version = :version',
          ExpressionAttributeValues: { ':version': before.version },
        },
      },
      onConditionFailed: concurrentlyModified(def),
    };
    return [
      entity,
      ...this.referenceChecks(def, before.doc, parsed),
      ...derivedItemOps(this, def, before.doc, parsed),
      ...markerOps(this.tableName, def, [before.doc, parsed]),
      ...renamingOps(this.tableName, def, before.doc, parsed),
      ...this.routerNoticeOps(def, before.doc, parsed),
    ];
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
    ops.push(...derivedItemOps(this, def, doc, undefined));
    ops.push(this.countOp(def, -1));
    ops.push(...markerOps(this.tableName, def, [doc]));
    ops.push(...namingOps(this.tableName, def, doc, 'remove'));
    ops.push(...this.routerNoticeOps(def, doc, undefined));
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
      if (isConditionFailure(error)) throw concurrentlyModified(def)();
      throw error;
    }
    return stored.version + 1;
  }

  /** Clears the mark of a delete that did not happen; a no-op if the entity changed or went meanwhile. */
  async unmarkDeleting<D extends BaseDocument>(def: EntityDefinition<D>, id: string, version: number): Promise<void> {
    await unlessConditionFails(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.entity(def.collection, id),
          UpdateExpression: 'REMOVE deletingUntil',
          ConditionExpression: 'version = :version',
          ExpressionAttributeValues: { ':version': version },
        }),
      ),
    );
  }

  /**
   * Entities of any types and raw items (`items`: session items, markers) in one batch read, strongly consistent
   * unless `read` says otherwise (`READS`), so reads that do not depend on one another cost one round trip: each
   * answer in the order asked, undefined where nothing is stored (or an id too long for a key names nothing).
   */
  async readTogether<const R extends readonly EntityRef[]>(
    entities: R,
    items: readonly ItemKey[] = [],
    read: ReadKind = 'itemsByKey',
  ): Promise<{ entities: { [K in keyof R]: Stored<DocOf<R[K]['def']>> | undefined }; items: (Item | undefined)[] }> {
    const entityKeys = entities.map((ref) => (fitsKey(ref.id) ? keys.entity(ref.def.collection, ref.id) : undefined));
    const wanted = new Map<string, Item>();
    for (const key of [...entityKeys, ...items]) if (key) wanted.set(itemKeyOf(key), { PK: key.PK, SK: key.SK });
    const answered = wanted.size > 0 ? await this.batchGet([...wanted.values()], undefined, read) : [];
    const found = new Map(answered.map((item) => [itemKeyOf(item as { PK: unknown; SK: unknown }), item]));
    const itemAt = (key: ItemKey | undefined) => (key ? found.get(itemKeyOf(key)) : undefined);
    const stored = entities.map((ref, index) => {
      const item = itemAt(entityKeys[index]);
      return item ? storedOf(ref.def, item) : undefined;
    });
    return {
      entities: stored as { [K in keyof R]: Stored<DocOf<R[K]['def']>> | undefined },
      items: items.map((key) => itemAt(key)),
    };
  }

  /**
   * Several entities by id (100 per request); missing ids are left out, order is kept. Strongly consistent
   * (`READS.entity`) unless `read` names an eventual kind (`listPage`: ids from eventually consistent reads).
   */
  async getMany<D extends BaseDocument>(
    def: EntityDefinition<D>,
    ids: readonly string[],
    read: ReadKind = 'entity',
  ): Promise<D[]> {
    return (await this.getManyStored(def, ids, read)).map((stored) => stored.doc);
  }

  /** As `getMany`, with each entity's version, for writes conditioned on what was read. */
  async getManyStored<D extends BaseDocument>(
    def: EntityDefinition<D>,
    ids: readonly string[],
    read: ReadKind = 'entity',
  ): Promise<Stored<D>[]> {
    // BatchGetItem refuses duplicate keys, and keys too long for DynamoDB name nothing.
    const storable = [...new Set(ids)].filter(fitsKey);
    const items = await this.batchGet(
      storable.map((id) => keys.entity(def.collection, id)),
      undefined,
      read,
    );
    const found = new Map(
      items.map((item) => {
        const stored = storedOf(def, item);
        return [stored.doc.id, stored];
      }),
    );
    return storable.flatMap((id) => {
      const stored = found.get(id);
      return stored ? [stored] : [];
    });
  }

  /**
   * The items of these (distinct) keys, 100 per request, with what DynamoDB leaves unprocessed (throttling) sent
   * again; keys of items that do not exist are left out, in no particular order. `projection` narrows the items;
   * `read` says what they are read for (`READS`; strongly consistent unless it says otherwise).
   */
  async batchGet(
    itemKeys: readonly Record<string, unknown>[],
    projection?: string,
    read: ReadKind = 'itemsByKey',
  ): Promise<Record<string, unknown>[]> {
    const chunks: Record<string, unknown>[][] = [];
    for (let i = 0; i < itemKeys.length; i += 100) chunks.push(itemKeys.slice(i, i + 100));
    // The chunks go out together (bounded), so reading a thousand keys is one wave, not ten.
    const items = await mapBounded(chunks, BATCH_CONCURRENCY, (chunk) => this.batchGetChunk(chunk, projection, read));
    return items.flat();
  }

  private async batchGetChunk(
    chunk: readonly Record<string, unknown>[],
    projection: string | undefined,
    read: ReadKind,
  ) {
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
              ...readOptions(read),
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
    return entityExistsOp(this.tableName, collection, id, onMissing);
  }

  /**
   * Moves change markers to now, each its own small update, a few at a time: for markers a write's own transaction
   * cannot name because finding them needs reads (the identity roles a service's policies grant it to). The marker of
   * an identity that is not stored (a policy may name `@<id>` of none) is not moved: its update is conditioned on the
   * identity's item (`markerMove`), so it never creates one.
   */
  async moveChangeMarkers(names: Iterable<string>): Promise<void> {
    await mapBounded([...new Set(names)], AFTER_COMMIT_CONCURRENCY, async (name) => {
      const update = markerMove(this.tableName, name)?.item.Update;
      if (update) await unlessConditionFails(this.db.send(new UpdateCommand(update as UpdateCommandInput)));
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
    const ops = await this.withMarkerMoves(this.merged(unmerged), unmerged);
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

  /**
   * How many items `ops` write as one transaction, as `transact` sends them: counters and namings merged, and the
   * change-marker moves added. Whether an identity whose marker moves is stored decides only which item its move is
   * (an update or a check), never how many, so the count needs no read.
   */
  transactionItemCount(ops: readonly WriteOp[]): number {
    return withMarkerMoves(this.tableName, this.merged(ops), markersOf(ops), new Set(), identityRace).length;
  }

  private merged(ops: readonly WriteOp[]): WriteOp[] {
    return mergeNamings(mergeCounters(this.tableName, onceEachNotice(ops)));
  }

  /**
   * The merged transaction with the change-marker moves its writes asked for (`change-markers.ts`): identities whose
   * own marker moves but which the transaction does not write are read first (strongly, keys only), since a policy may
   * name `@<id>` of an identity that does not exist, whose marker must then not be written at all.
   */
  private async withMarkerMoves(ops: readonly WriteOp[], unmerged: readonly WriteOp[]): Promise<WriteOp[]> {
    const markers = markersOf(unmerged);
    if (markers.size === 0) return [...ops];
    const unwritten = unwrittenIdentityKeys(ops, markers);
    const stored = unwritten.length > 0 ? await this.batchGet(unwritten, 'PK, SK', 'entity') : [];
    const storedKeys = new Set(stored.map((item) => itemKeyOf(item as { PK: unknown; SK: unknown })));
    return withMarkerMoves(this.tableName, ops, markers, storedKeys, identityRace);
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
   * The write that brings an entity's filter record (its id-order item) in step with `doc`: for the few writes
   * outside the kit that change a filterable field (a lockout's disable, a login's `updatedAt`).
   */
  filterRecordOps<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): WriteOp[] {
    return [itemOps.put(this.tableName, idOrderItemOf(def, doc))];
  }

  /** An entity's Put: its layout keys, its document (structured fields as text) and version, refused if too large. */
  private entityPut<D extends BaseDocument>(
    def: EntityDefinition<D>,
    doc: D,
    version: number,
    unknownFields: Readonly<Record<string, unknown>> = {},
  ) {
    const attributes = storedAttributes({ ...unknownFields, ...(doc as unknown as Record<string, unknown>) });
    const Item = { ...this.layout(def, doc), ...attributes, version };
    const bytes = itemBytes(Item);
    if (bytes > MAX_ITEM_BYTES) throw tooLarge(def.label, attributes, bytes);
    return { TableName: this.tableName, Item };
  }

  private layout<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): Record<string, string> {
    return { ...keys.entity(def.collection, doc.id), ...documentIndexKeys(def, doc) };
  }

  /**
   * The checks that the targets a write comes to reference exist and take links (those `before` did not already
   * reference), each target once; `unchecked` names fields whose target the same transaction writes.
   */
  private referenceChecks<D extends BaseDocument>(
    def: EntityDefinition<D>,
    before: D | undefined,
    after: D,
    unchecked: readonly ReferenceField<D>[] = [],
  ): WriteOp[] {
    const checked = new Set<string>();
    const ops: WriteOp[] = [];
    for (const reference of def.references ?? []) {
      const old = new Set(before ? referenceValues(before, reference) : []);
      for (const target of referenceValues(after, reference)) {
        const missing = () =>
          invalidField(reference.field, `no ${reference.collection} found with id ${target}`, target);
        if (!fitsKey(target)) throw missing();
        if (old.has(target) || unchecked.includes(reference.field) || !once(checked, reference, target)) continue;
        ops.push(this.existsOp(reference.collection, target, missing));
      }
    }
    return ops;
  }

  /** The routers' change log entries a write of `def` makes (`EntityDefinition.routerNotices`), one item each. */
  routerNoticeOps<D extends BaseDocument>(
    def: EntityDefinition<D>,
    before: D | undefined,
    after: D | undefined,
  ): WriteOp[] {
    const now = this.now();
    return (def.routerNotices?.(before, after) ?? []).map((notice) => {
      const op = ctrlChangeOp(this, notice, now);
      const once = onceKeyOf(notice);
      if (once !== undefined) return { ...op, notice: once };
      if (notice.kind !== 'ended') return op;
      return { ...op, afterCommit: async () => this.afterSessionsEnded?.(notice.ended) };
    });
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

/** The writes with each notice a transaction needs once (`WriteOp.notice`) kept at its first. */
function onceEachNotice(ops: readonly WriteOp[]): WriteOp[] {
  const seen = new Set<string>();
  return ops.filter((op) => {
    if (op.notice === undefined) return true;
    if (seen.has(op.notice)) return false;
    seen.add(op.notice);
    return true;
  });
}

/**
 * One counter update per type (deltas summed), so a transaction never names the same item twice; change-marker moves
 * are left out, for `withMarkerMoves` to add once the rest of the transaction is known.
 */
function mergeCounters(tableName: string, ops: readonly WriteOp[]): WriteOp[] {
  const deltas = new Map<string, number>();
  const others: WriteOp[] = [];
  for (const op of ops) {
    if (op.counter) deltas.set(op.counter.collection, (deltas.get(op.counter.collection) ?? 0) + op.counter.delta);
    else if (op.changeMarker === undefined) others.push(op);
  }
  for (const [collection, delta] of deltas) if (delta !== 0) others.push(counterUpdate(tableName, collection, delta));
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
  // Markers are scoped (an identity role, or the one global marker moved only by rare config type changes), so
  // concurrent writers seldom share one. Tagged, each is added once by `transact` (`withMarkerMoves`).
  return [...names].flatMap((marker) => {
    const move = markerMove(tableName, marker);
    return move ? [{ ...move, changeMarker: marker }] : [];
  });
}

/** The change markers the writes move (`markerOps`), each once. */
function markersOf(ops: readonly WriteOp[]): Set<string> {
  return new Set(ops.flatMap((op) => (op.changeMarker === undefined ? [] : [op.changeMarker])));
}

/** An identity whose marker a transaction moves was created or deleted since the store read whether it is stored. */
function identityRace(): ConcurrentModificationError {
  return new ConcurrentModificationError('SERVER_TOO_MANY_REQUESTS', {
    message: 'An identity the change concerns was created or deleted at the same time; retry.',
  });
}

/** A version-checked write lost to a concurrent writer; the read-modify-write that made it may simply run again. */
export class ConcurrentModificationError extends ApiError {}

function concurrentlyModified<D extends BaseDocument>(def: EntityDefinition<D>): () => ApiError {
  return () =>
    new ConcurrentModificationError('SERVER_TOO_MANY_REQUESTS', {
      message: `The ${def.label} was changed by another request at the same time; retry.`,
    });
}
