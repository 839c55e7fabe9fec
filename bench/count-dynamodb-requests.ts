import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKindOf } from '#shared/store/keys.ts';
import { TABLE_KEYS } from '#shared/store/table-definition.ts';
import { CAPACITY_OPERATIONS, capacityOfRequest } from './capacity-rules.ts';
import { type CapacityFigures, CapacityTally, TABLE_TARGET } from './capacity-tally.ts';
import { ItemFacts, type ItemKey, keyText, partitionsOf } from './item-facts.ts';
import { PartitionTally, singleItemWrites, UNKNOWN_PARTITION } from './partition-writes.ts';
import { attributeChanges, type UpdateRequest } from './update-expression.ts';
import { batchWrites, type ItemWrite } from './write-model.ts';

/**
 * What a client has sent: requests by DynamoDB operation (`GetItem`, `Query`, `TransactWriteItems`, ...), their
 * sequential waves, the request units they consumed under AWS's rules (`capacity-rules.ts`), and, while tracked, the
 * write units each partition took (`partition-writes.ts`).
 */
export interface DynamoDbRequestCounter {
  /** A copy of the counts so far; subtract two snapshots to get what happened in between. */
  snapshot(): ReadonlyMap<string, number>;
  /**
   * Waves so far: sequential round trips, by the rule the tests assert (`test/support/dynamodb-recorder.ts`): a
   * request's wave is one more than the highest wave of the requests completed when it was sent, so requests sent
   * together share a wave and one that waited on another is a wave later even if a sibling is still in flight. For
   * operations run one after another, the difference of two readings is the waves between them.
   */
  waves(): number;
  /** Read and write request units so far, by table and index. Call `settle` first for the latest. */
  capacity(): CapacityFigures;
  /** The base table's write units so far by the kind of item written (`itemKindOf`: entity, id order, ...). */
  writeUnitsByKind(): ReadonlyMap<string, number>;
  /** Requests AWS reports no capacity for (cancelled transactions), which the units leave out, by reason. */
  unpriced(): ReadonlyMap<string, number>;
  /** Write units by partition (`<table or index> <partition key>`) while `trackPartitions(true)`. */
  partitionWrites(): ReadonlyMap<string, number>;
  trackPartitions(on: boolean): void;
  /**
   * The CPU time, in ms, this counter's own bookkeeping took so far (charging units, learning items): the bench's work,
   * done inside the handler's requests, which a Lambda does not do; the server timer leaves it out (`ServerTimes.cpuMs`).
   */
  ownCpuMs(): number;
  /** Runs `work` (a measured run's set-up) without counting what it sends. */
  uncounted<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Charges what waited on items the bench had not seen whole (condition checks, failed conditional writes, index
   * partitions): reads them now, uncounted. Call it outside timed runs, before a snapshot.
   */
  settle(): Promise<void>;
}

type Item = Record<string, unknown>;

/** Indexes whose entries are whole items (a keys-only index's are not). */
const WHOLE_ITEM_INDEXES: ReadonlySet<string> = new Set(
  TABLE_KEYS.indexes.filter((index) => index.projection === 'ALL').map((index) => index.name),
);

interface TransactRequest {
  Put?: { Item: Item };
  Update?: UpdateRequest & { Key: ItemKey };
  Delete?: { Key: ItemKey };
}

/** Index partitions an update sets or removes (others stay as they were). */
function setPartitions(update: UpdateRequest): Record<string, string | undefined> {
  const { set, removed } = attributeChanges(update);
  const partitions: Record<string, string | undefined> = {};
  for (const index of TABLE_KEYS.indexes) {
    if (removed.has(index.partitionKey)) partitions[index.name] = undefined;
    const value = set.get(index.partitionKey);
    if (value !== undefined) partitions[index.name] = String(value);
  }
  return partitions;
}

/** An item write waiting for its item to be read (its size after the run, or its partition in an index). */
interface PendingWrite {
  readonly write: ItemWrite;
  readonly capacity: boolean;
  readonly heat: boolean;
}

/** Learns the items a request wrote or read whole. */
function learn(facts: ItemFacts, operation: string, input: Item, output: Item): void {
  const whole = input.ProjectionExpression === undefined && (input.Select ?? 'ALL_ATTRIBUTES') === 'ALL_ATTRIBUTES';
  switch (operation) {
    case 'PutItem':
      facts.learn(input.Item as Item);
      return;
    case 'UpdateItem':
      if (input.ReturnValues === 'ALL_NEW' && output.Attributes) facts.learn(output.Attributes as Item);
      else facts.changed(input.Key as ItemKey, setPartitions(input as UpdateRequest));
      return;
    case 'DeleteItem':
      facts.forget(input.Key as ItemKey);
      return;
    case 'GetItem':
      if (whole && output.Item) facts.learn(output.Item as Item);
      return;
    case 'Query':
    case 'Scan':
      if (whole && (input.IndexName === undefined || WHOLE_ITEM_INDEXES.has(String(input.IndexName)))) {
        for (const item of (output.Items ?? []) as Item[]) facts.learn(item);
      }
      return;
    case 'BatchGetItem': {
      const requested = (input.RequestItems ?? {}) as Record<string, Item>;
      for (const [table, items] of Object.entries((output.Responses ?? {}) as Record<string, Item[]>)) {
        if (requested[table]?.ProjectionExpression !== undefined) continue;
        for (const item of items) facts.learn(item);
      }
      return;
    }
    case 'TransactWriteItems':
      for (const request of (input.TransactItems ?? []) as TransactRequest[]) {
        if (request.Put) facts.learn(request.Put.Item);
        else if (request.Update) facts.changed(request.Update.Key, setPartitions(request.Update));
        else if (request.Delete) facts.forget(request.Delete.Key);
      }
      return;
    case 'BatchWriteItem':
      for (const requests of Object.values((input.RequestItems ?? {}) as Record<string, Item[]>)) {
        for (const request of requests) {
          const put = (request.PutRequest as { Item?: Item } | undefined)?.Item;
          const remove = (request.DeleteRequest as { Key?: ItemKey } | undefined)?.Key;
          if (put) facts.learn(put);
          else if (remove) facts.forget(remove);
        }
      }
      return;
  }
}

/** The key a single-item request names (a batch: its first item's, which its units are put down to). */
function keyOf(operation: string, input: Item): ItemKey | undefined {
  if (operation === 'PutItem') return input.Item as ItemKey;
  if (operation === 'UpdateItem' || operation === 'DeleteItem') return input.Key as ItemKey;
  const first = Object.values((input.RequestItems ?? {}) as Record<string, Item[]>)[0]?.[0];
  return ((first?.PutRequest as { Item?: ItemKey } | undefined)?.Item ??
    (first?.DeleteRequest as { Key?: ItemKey } | undefined)?.Key) as ItemKey | undefined;
}

/** DynamoDB's limit of keys per BatchGetItem. */
const BATCH_KEYS = 100;

/**
 * Counts every `send` of a document client (and of the client it wraps: they share one middleware stack), asking
 * each request that takes it for `ReturnConsumedCapacity: INDEXES`. The middleware sits in the initialize step, so
 * an SDK retry of the same command is counted once and the request and answer are the document client's own.
 */
export function countDynamoDbRequests(db: DynamoDBDocumentClient): DynamoDbRequestCounter {
  const counts = new Map<string, number>();
  const unpriced = new Map<string, number>();
  const tally = new CapacityTally();
  const byKind = new Map<string, number>();
  const addKind = (partitionKey: unknown, units: number) => {
    const kind = itemKindOf(String(partitionKey));
    byKind.set(kind, (byKind.get(kind) ?? 0) + units);
  };
  const partitions = new PartitionTally();
  const facts = new ItemFacts();
  let pending: PendingWrite[] = [];
  let tracking = false;
  let paused = 0;
  let completedWave = 0;
  let waves = 0;
  let ownCpuMs = 0;
  /** Runs one piece of the counter's bookkeeping, adding its CPU time to `ownCpuMs`. */
  const bookkeeping = <T>(work: () => T): T => {
    const before = process.cpuUsage();
    try {
      return work();
    } finally {
      const spent = process.cpuUsage(before);
      ownCpuMs += (spent.user + spent.system) / 1000;
    }
  };

  /** Charges an item write, given the item as stored now when it had to be read. */
  const apply = (entry: PendingWrite, stored: Item | undefined, read: boolean) => {
    const { write } = entry;
    let partition = write.partition;
    if (partition === undefined) {
      partition = read ? (stored ? partitionsOf(stored)[write.target] : UNKNOWN_PARTITION) : undefined;
      // Not in that index after all: nothing was written there.
      if (partition === undefined) return;
    }
    const units = typeof write.units === 'number' ? write.units : write.units(stored);
    if (entry.capacity) {
      tally.add('write', write.target, units);
      if (write.target === TABLE_TARGET) addKind(partition, units);
    }
    if (entry.heat) partitions.add({ target: write.target, partition, units });
  };

  const charge = (write: ItemWrite, flags: { capacity: boolean; heat: boolean }) => {
    if (!flags.capacity && !flags.heat) return;
    const entry = { write, ...flags };
    if (typeof write.units === 'number' && write.partition !== undefined) apply(entry, undefined, false);
    else pending.push(entry);
  };

  const account = (operation: string, input: Item, result: { output: Item } | { error: unknown }) => {
    const capacity = capacityOfRequest(operation, input, result, facts);
    for (const { kind, target, units } of capacity.charges) {
      tally.add(kind, target, units);
      if (kind === 'write' && target === TABLE_TARGET) addKind(keyOf(operation, input)?.PK, units);
    }
    for (const write of capacity.writes) charge(write, { capacity: true, heat: tracking });
    if (capacity.unpriced) unpriced.set(capacity.unpriced, (unpriced.get(capacity.unpriced) ?? 0) + 1);
    if (!tracking || !('output' in result)) return;
    if (operation === 'BatchWriteItem') {
      for (const write of batchWrites(input, result.output, facts)) charge(write, { capacity: false, heat: true });
      return;
    }
    if (operation !== 'PutItem' && operation !== 'UpdateItem' && operation !== 'DeleteItem') return;
    const written = new Map<string, number>();
    for (const { kind, target, units } of capacity.charges) {
      if (kind === 'write') written.set(target, (written.get(target) ?? 0) + units);
    }
    for (const write of singleItemWrites(operation, input, result.output, facts, written)) {
      charge(write, { capacity: false, heat: true });
    }
  };

  db.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? 'unknown').replace(/Command$/, '');
      const input = args.input as Item;
      if (paused > 0) {
        const result = await next(args);
        learn(facts, operation, input, result.output as Item);
        return result;
      }
      counts.set(operation, (counts.get(operation) ?? 0) + 1);
      const wave = completedWave + 1;
      waves = Math.max(waves, wave);
      const asked = CAPACITY_OPERATIONS.has(operation) ? { ...input, ReturnConsumedCapacity: 'INDEXES' } : input;
      try {
        const result = await next({ ...args, input: asked });
        bookkeeping(() => {
          account(operation, input, { output: result.output as Item });
          learn(facts, operation, input, result.output as Item);
        });
        return result;
      } catch (error) {
        bookkeeping(() => account(operation, input, { error }));
        throw error;
      } finally {
        completedWave = Math.max(completedWave, wave);
      }
    },
    { step: 'initialize', name: 'benchRequestCounter' },
  );

  const uncounted = async <T>(work: () => Promise<T>): Promise<T> => {
    paused++;
    try {
      return await work();
    } finally {
      paused--;
    }
  };

  /** The items with these keys as stored now (undefined: not stored), read uncounted. */
  const readItems = async (wanted: readonly { tableName: string; key: ItemKey }[]) => {
    const found = new Map<string, Item | undefined>();
    const byTable = new Map<string, Map<string, ItemKey>>();
    for (const { tableName, key } of wanted) {
      const keysOfTable = byTable.get(tableName) ?? new Map<string, ItemKey>();
      keysOfTable.set(keyText(key), { PK: key.PK, SK: key.SK });
      byTable.set(tableName, keysOfTable);
    }
    await uncounted(async () => {
      for (const [tableName, keysOfTable] of byTable) {
        const all = [...keysOfTable.values()];
        for (const key of all) found.set(keyText(key), undefined);
        for (let start = 0; start < all.length; start += BATCH_KEYS) {
          let request: Record<string, { Keys: ItemKey[]; ConsistentRead: boolean }> = {
            [tableName]: { Keys: all.slice(start, start + BATCH_KEYS), ConsistentRead: true },
          };
          while (Object.keys(request).length > 0) {
            const output = await db.send(new BatchGetCommand({ RequestItems: request }));
            for (const item of output.Responses?.[tableName] ?? []) found.set(keyText(item as ItemKey), item);
            request = (output.UnprocessedKeys ?? {}) as typeof request;
          }
        }
      }
    });
    return found;
  };

  const settle = async () => {
    const waiting = pending;
    pending = [];
    if (waiting.length === 0) return;
    const items = await readItems(waiting.map(({ write }) => write.item));
    for (const entry of waiting) {
      const stored = items.get(keyText(entry.write.item.key));
      if (stored) facts.learn(stored);
      apply(entry, stored, true);
    }
  };

  return {
    snapshot: () => new Map(counts),
    waves: () => waves,
    capacity: () => tally.snapshot(),
    writeUnitsByKind: () => new Map(byKind),
    unpriced: () => new Map(unpriced),
    partitionWrites: () => partitions.snapshot(),
    trackPartitions: (on) => {
      tracking = on;
    },
    uncounted,
    settle,
    ownCpuMs: () => ownCpuMs,
  };
}

/** What was sent between two snapshots, by operation. */
export function requestsBetween(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [operation, count] of after) {
    const sent = count - (before.get(operation) ?? 0);
    if (sent > 0) delta.set(operation, sent);
  }
  return delta;
}
