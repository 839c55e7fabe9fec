import {
  BatchGetCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { ensureTable } from '#local/create-table.ts';
import { loadConfig } from '#shared/config.ts';
import { createDocumentClient } from '#shared/store/dynamo-client.ts';
import { totalUnits } from './capacity-tally.ts';
import { countDynamoDbRequests } from './count-dynamodb-requests.ts';
import { itemSizeBytes, readUnitsOf, writeUnitsOf } from './item-size.ts';
import { markdownTable } from './markdown-table.ts';

/** Units with up to two decimals. */
const units = (value: number) => String(Math.round(value * 100) / 100);

/** One request sent to a scratch table: what Local reported, what AWS's rules say, and what the bench counted. */
export interface CapacityCheckRow {
  readonly request: string;
  readonly kind: 'read' | 'write';
  readonly localReported: number | undefined;
  readonly awsRule: number;
  readonly rule: string;
  readonly benchCounted: number;
}

const TABLE = 'bench-capacity-check';
const pad = (bytes: number) => 'x'.repeat(bytes);
type Item = Record<string, unknown>;

/** Local's own total for a request (undefined: it reported nothing, as for a failed write). */
function reportedTotal(consumed: unknown): number | undefined {
  if (consumed === undefined) return undefined;
  const list = (Array.isArray(consumed) ? consumed : [consumed]) as { CapacityUnits?: number }[];
  return list.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0);
}

/**
 * Sends requests shaped like the controller's to a scratch table (the same keys and indexes) and compares, for each,
 * DynamoDB Local's `ConsumedCapacity`, the units AWS's documented rules give, and what the bench counts. The bench's
 * count must equal AWS's rule; Local's report is shown to say where the bench corrects it.
 */
export async function capacityCheck(dynamoDbEndpoint: string): Promise<CapacityCheckRow[]> {
  const db = createDocumentClient({ ...loadConfig({}), dynamoDbEndpoint });
  const counter = countDynamoDbRequests(db);
  await ensureTable(db, TABLE);
  const rows: CapacityCheckRow[] = [];
  const check = async (
    request: string,
    kind: 'read' | 'write',
    awsRule: number,
    rule: string,
    send: () => Promise<{ ConsumedCapacity?: unknown }>,
  ) => {
    const before = totalUnits(counter.capacity()[kind]);
    let localReported: number | undefined;
    try {
      localReported = reportedTotal((await send()).ConsumedCapacity);
    } catch (error) {
      if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
    }
    await counter.settle();
    rows.push({
      request,
      kind,
      localReported,
      awsRule,
      rule,
      benchCounted: totalUnits(counter.capacity()[kind]) - before,
    });
  };
  const put = (item: Item) => db.send(new PutCommand({ TableName: TABLE, Item: item }));
  try {
    const session: Item = {
      PK: 'APISESSION#probe',
      SK: 'META',
      GSI1PK: 'TYPE#api-sessions',
      GSI1SK: 'probe',
      GSI2PK: 'identities#probe#api-sessions',
      GSI2SK: 'api-sessions#probe',
      GSI3PK: 'ACTIVITY#api-sessions',
      GSI3SK: '2026-01-01T00:00:00.000Z',
      lastActivityAt: '2026-01-01T00:00:00.000Z',
      expiresAtEpoch: 1_800_000_000,
      body: pad(500),
    };
    const sessionUnits = writeUnitsOf(itemSizeBytes(session));
    await check(
      'PutItem, a new item in GSI1 and GSI2 (~600 B)',
      'write',
      3 * writeUnitsOf(itemSizeBytes({ ...session, GSI3PK: undefined, GSI3SK: undefined })),
      'a unit per KB on the table and on each index the item enters',
      () =>
        db.send(
          new PutCommand({
            TableName: TABLE,
            Item: { ...session, PK: 'probe-put', GSI3PK: undefined, GSI3SK: undefined },
            ReturnConsumedCapacity: 'INDEXES',
          }),
        ),
    );
    await put(session);
    await check(
      'UpdateItem moving GSI3SK of an item in GSI1, GSI2, GSI3 (the session touch)',
      'write',
      sessionUnits * 3 + 2,
      'table 1 per KB; GSI1, GSI2 (all attributes) 1 per KB; GSI3 key moved: delete + put, 2',
      () =>
        db.send(
          new UpdateCommand({
            TableName: TABLE,
            Key: { PK: session.PK, SK: 'META' },
            UpdateExpression: 'SET lastActivityAt = :at, GSI3SK = :at, expiresAtEpoch = :ttl',
            ExpressionAttributeValues: { ':at': '2026-01-01T00:01:00.000Z', ':ttl': 1_800_000_060 },
            ReturnValues: 'ALL_NEW',
            ReturnConsumedCapacity: 'INDEXES',
          }),
        ),
    );
    const large: Item = { PK: 'probe-large', SK: 'META', body: pad(5000) };
    await put(large);
    await check(
      'GetItem, strongly consistent, 5 KB',
      'read',
      readUnitsOf(itemSizeBytes(large)),
      'a unit per 4 KB',
      () => db.send(new GetCommand({ TableName: TABLE, Key: { PK: 'probe-large', SK: 'META' }, ConsistentRead: true })),
    );
    await check(
      'GetItem, eventually consistent, 5 KB',
      'read',
      readUnitsOf(itemSizeBytes(large)) / 2,
      'half a unit per 4 KB',
      () => db.send(new GetCommand({ TableName: TABLE, Key: { PK: 'probe-large', SK: 'META' } })),
    );
    await check('GetItem, strongly consistent, no such item', 'read', 1, 'a read of nothing costs one unit', () =>
      db.send(new GetCommand({ TableName: TABLE, Key: { PK: 'probe-none', SK: 'META' }, ConsistentRead: true })),
    );
    const rows20 = Array.from({ length: 20 }, (_, i) => ({ PK: 'probe-query', SK: `item-${i}`, body: pad(500) }));
    for (const item of rows20) await put(item);
    const queried = rows20.reduce((sum, item) => sum + itemSizeBytes(item), 0);
    await check(
      'Query, eventually consistent, 20 items (~10 KB)',
      'read',
      readUnitsOf(queried) / 2,
      'the items read together, half a unit per 4 KB',
      () =>
        db.send(
          new QueryCommand({
            TableName: TABLE,
            KeyConditionExpression: 'PK = :pk',
            ExpressionAttributeValues: { ':pk': 'probe-query' },
          }),
        ),
    );
    await check(
      'Query that finds nothing, eventually consistent',
      'read',
      0.5,
      'a request reads at least one unit (half, eventually consistent)',
      () =>
        db.send(
          new QueryCommand({
            TableName: TABLE,
            KeyConditionExpression: 'PK = :pk',
            ExpressionAttributeValues: { ':pk': 'probe-nothing' },
          }),
        ),
    );
    await check(
      'BatchGetItem, strongly consistent, 2 items of 500 B and 1 missing key',
      'read',
      3,
      'each key as a GetItem: a unit each, found or not',
      () =>
        db.send(
          new BatchGetCommand({
            RequestItems: {
              [TABLE]: {
                Keys: [
                  { PK: 'probe-query', SK: 'item-0' },
                  { PK: 'probe-query', SK: 'item-1' },
                  { PK: 'probe-none', SK: 'META' },
                ],
                ConsistentRead: true,
              },
            },
          }),
        ),
    );
    const entity: Item = { PK: 'probe-tx', SK: 'META', GSI1PK: 'TYPE#probe', GSI1SK: 'tx', body: pad(300) };
    await check(
      'TransactWriteItems, Put of an item in GSI1 (~350 B)',
      'write',
      2 + 1,
      'the table side doubled (prepare + commit), the index side not',
      () => db.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: TABLE, Item: entity } }] })),
    );
    await check('TransactWriteItems, two Puts of 100 B items', 'write', 2 * 2, 'each item a unit per KB, doubled', () =>
      db.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: TABLE, Item: { PK: 'probe-tx-a', SK: 'META', body: pad(100) } } },
            { Put: { TableName: TABLE, Item: { PK: 'probe-tx-b', SK: 'META', body: pad(100) } } },
          ],
        }),
      ),
    );
    await check(
      'TransactWriteItems, ConditionCheck of a 5 KB item + Put of a small one',
      'write',
      2 * writeUnitsOf(itemSizeBytes(large)) + 2,
      'a ConditionCheck costs two write units per KB of the item checked',
      () =>
        db.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                ConditionCheck: {
                  TableName: TABLE,
                  Key: { PK: 'probe-large', SK: 'META' },
                  ConditionExpression: 'attribute_exists(PK)',
                },
              },
              { Put: { TableName: TABLE, Item: { PK: 'probe-tx-2', SK: 'META' } } },
            ],
          }),
        ),
    );
    await check(
      'UpdateItem whose condition fails, on a 5 KB item',
      'write',
      writeUnitsOf(itemSizeBytes(large)),
      'a failed conditional write costs a unit per KB of the stored item',
      () =>
        db.send(
          new UpdateCommand({
            TableName: TABLE,
            Key: { PK: 'probe-large', SK: 'META' },
            UpdateExpression: 'SET touched = :yes',
            ConditionExpression: 'attribute_not_exists(PK)',
            ExpressionAttributeValues: { ':yes': true },
          }),
        ),
    );
    return rows;
  } finally {
    db.destroy();
  }
}

/** The check as Markdown; throws when the bench's count differs from AWS's rule anywhere. */
export function capacityCheckReport(rows: readonly CapacityCheckRow[]): string {
  const wrong = rows.filter((row) => Math.abs(row.benchCounted - row.awsRule) > 1e-9);
  if (wrong.length > 0) {
    throw new Error(`the bench counts units against AWS's rules for: ${wrong.map((row) => row.request).join('; ')}`);
  }
  return [
    '### Request units: DynamoDB Local against AWS',
    '',
    markdownTable(
      ['request', 'units', "Local's ConsumedCapacity", "AWS's rule", 'bench counts', 'rule'],
      rows.map((row) => [
        row.request,
        row.kind === 'read' ? 'RRU' : 'WRU',
        row.localReported === undefined ? 'none' : units(row.localReported),
        units(row.awsRule),
        units(row.benchCounted),
        row.rule,
      ]),
      [false, false, true, true, true, false],
    ),
    '',
    'Each request is sent to a scratch table with the controller\'s keys and indexes; "bench counts" is what the ' +
      "bench's middleware charges (`capacity-rules.ts`), which must equal AWS's rule. Where Local's own figure differs, " +
      'the bench applies the rule instead.',
  ].join('\n');
}
