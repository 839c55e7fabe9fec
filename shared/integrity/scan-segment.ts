import { paginateScan, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { API_SESSIONS_COLLECTION } from '../auth/api-session.ts';
import { removeSessions, toSession } from '../auth/api-session-store.ts';
import type { Deps } from '../deps.ts';
import { definitionOf } from '../entities/definitions.ts';
import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import { mapBounded } from '../map-bounded.ts';
import { filterRecordOf, referenceValues } from '../store/entity-store.ts';
import { packBucket, packOp } from '../store/filter-packs.ts';
import { documentOf, keys } from '../store/keys.ts';
import type { WriteOp } from '../store/write-op.ts';
import { type ExpectedItem, expectedItemsOf, itemKeyOf, matches } from './expected-items.ts';
import { Findings } from './findings.ts';
import type { IntegrityMode, ScanSegment } from './integrity-types.ts';

/** Items a scan page reads; its point reads are batched per page. */
const PAGE_SIZE = 250;
/** The orchestration's own items (lock, results, findings): never checked. */
export const INTEGRITY_PREFIX = 'INTEGRITY#';

type Item = Record<string, unknown>;

interface Entity {
  readonly def: EntityDefinition<BaseDocument>;
  readonly doc: BaseDocument;
  readonly version: number;
}

/** What one segment's check shares between pages. */
interface Scan {
  readonly deps: Deps;
  readonly mode: IntegrityMode;
  readonly findings: Findings;
  readonly counts: Record<string, number>;
  /** Role catalog entries already looked up for this segment's role members: each is checked once. */
  readonly catalogChecked: Set<string>;
  pointReads: number;
}

const label = (entity: { def: EntityDefinition<BaseDocument>; doc: BaseDocument }) =>
  `${entity.def.label} ${entity.doc.id}`;

/** The entity a `<collection>#<id>` / `META` item holds, when the collection is a declared type and it parses. */
function entityOf(item: Item): Entity | 'unreadable' | undefined {
  if (item.SK !== 'META') return undefined;
  const pk = String(item.PK);
  const at = pk.indexOf('#');
  if (at <= 0) return undefined;
  const def = definitionOf(pk.slice(0, at));
  if (!def) return undefined;
  const parsed = def.schema.safeParse(documentOf(item));
  if (!parsed.success) return 'unreadable';
  return { def, doc: parsed.data, version: Number(item.version ?? 0) };
}

function count(scan: Scan, entity: Entity): void {
  scan.counts[entity.def.collection] = (scan.counts[entity.def.collection] ?? 0) + 1;
}

/** Reads items by key, counting them as the scan's point reads. */
async function read(scan: Scan, itemKeys: readonly { PK: string; SK: string }[]): Promise<Map<string, Item>> {
  const unique = [...new Map(itemKeys.map((key) => [itemKeyOf(key), { PK: key.PK, SK: key.SK }])).values()];
  scan.pointReads += unique.length;
  const items = await scan.deps.store.batchGet(unique);
  return new Map(items.map((item) => [itemKeyOf(item as { PK: string; SK: string }), item]));
}

/** Writes a repair, or reports why it could not be written. */
async function repair(scan: Scan, description: string, ops: () => WriteOp[]): Promise<void> {
  if (scan.mode === 'check') {
    scan.findings.add(description, false);
    return;
  }
  try {
    await scan.deps.store.transact(ops());
    scan.findings.add(description, true);
  } catch (error) {
    scan.deps.logger.warn('integrity fix not written', { description, reason: (error as Error).message });
    scan.findings.add(`${description} (not fixed: ${(error as Error).message})`, false);
  }
}

/** A check that the entity is still as scanned, so a repair never undoes a write made since. */
function unchanged(scan: Scan, entity: Entity): WriteOp {
  return {
    item: {
      ConditionCheck: {
        TableName: scan.deps.store.tableName,
        Key: keys.entity(entity.def.collection, entity.doc.id),
        ConditionExpression: 'version = :version',
        ExpressionAttributeValues: { ':version': entity.version },
      },
    },
  };
}

const put = (scan: Scan, item: Item): WriteOp => ({
  item: { Put: { TableName: scan.deps.store.tableName, Item: item } },
});
const remove = (scan: Scan, key: { PK: unknown; SK: unknown }): WriteOp => ({
  item: { Delete: { TableName: scan.deps.store.tableName, Key: { PK: key.PK, SK: key.SK } } },
});

/**
 * Live entities: every derived item present and as the document says (fix: write it), every reference's target
 * alive (fix: a child whose parent is gone goes, as the parent's delete would have taken it), and the filter record
 * in its pack.
 */
async function checkEntities(scan: Scan, entities: readonly Entity[]): Promise<void> {
  const expected = entities.map((entity) => ({ entity, items: expectedItemsOf(entity.def, entity.doc) }));
  const targets = entities.flatMap((entity) =>
    (entity.def.references ?? []).flatMap((reference) =>
      referenceValues(entity.doc, reference).map((id) => keys.entity(reference.collection, id)),
    ),
  );
  const packKeys = entities.map((entity) => keys.filterPack(entity.def.collection, packBucket(entity.doc.id)));
  const sessionParents = entities.flatMap((entity) => {
    const parent = entity.def.parentOf?.(entity.doc);
    return parent?.collection === API_SESSIONS_COLLECTION ? [apiSessionPointer(parent.id)] : [];
  });
  const stored = await read(scan, [
    ...expected.flatMap(({ items }) => items.map(({ item }) => item)),
    ...targets,
    ...packKeys,
    ...sessionParents,
  ]);

  for (const { entity, items } of expected) {
    const orphanedBy = (entity.def.references ?? []).find(
      (reference) =>
        reference.onTargetDelete === 'cascade' &&
        referenceValues(entity.doc, reference).some(
          (id) => !stored.has(itemKeyOf(keys.entity(reference.collection, id))),
        ),
    );
    const parent = entity.def.parentOf?.(entity.doc);
    if (parent?.collection === API_SESSIONS_COLLECTION && !stored.has(itemKeyOf(apiSessionPointer(parent.id)))) {
      if (scan.mode === 'check') count(scan, entity);
      await repair(scan, `${label(entity)} belongs to API session ${parent.id}, which no longer exists`, () =>
        scan.deps.store.deleteOps(entity.def, entity.doc, entity.version),
      );
      continue;
    }
    if (orphanedBy) {
      // Counted only while it lives on: a fix deletes it (and moves the counter) now.
      if (scan.mode === 'check') count(scan, entity);
      await repair(
        scan,
        `${label(entity)} belongs to a ${orphanedBy.collection} that no longer exists (${orphanedBy.field})`,
        // Version-checked: a child changed since the scan read it is left for the next run.
        () => scan.deps.store.deleteOps(entity.def, entity.doc, entity.version),
      );
      continue;
    }
    count(scan, entity);
    for (const reference of entity.def.references ?? []) {
      for (const id of referenceValues(entity.doc, reference)) {
        if (!stored.has(itemKeyOf(keys.entity(reference.collection, id)))) {
          scan.findings.add(
            `${label(entity)} references ${reference.collection} ${id} (${reference.field}), which does not exist`,
            false,
          );
        }
      }
    }
    for (const want of items) await checkExpected(scan, entity, want, stored.get(itemKeyOf(want.item)));
    await checkPackRecord(
      scan,
      entity,
      stored.get(itemKeyOf(keys.filterPack(entity.def.collection, packBucket(entity.doc.id)))),
    );
  }
}

async function checkExpected(scan: Scan, entity: Entity, want: ExpectedItem, actual: Item | undefined): Promise<void> {
  if (actual && matches(want, actual)) return;
  if (actual && want.kind === 'unique marker') {
    scan.findings.add(
      `${label(entity)} shares a unique value (${want.item.SK}) with ${entity.def.label} ${String(actual.entityId)}`,
      false,
    );
    return;
  }
  const what = actual ? 'is out of date' : 'is missing';
  await repair(scan, `${label(entity)}: its ${want.kind} ${want.item.PK} / ${want.item.SK} ${what}`, () => [
    unchanged(scan, entity),
    put(scan, { ...want.item }),
  ]);
}

async function checkPackRecord(scan: Scan, entity: Entity, pack: Item | undefined): Promise<void> {
  const want = packOp(entity.def.collection, entity.doc.id, filterRecordOf(entity.def, entity.doc)).filterPack?.json;
  if (pack?.[`r:${entity.doc.id}`] === want) return;
  await repair(
    scan,
    `${label(entity)}: its filter record in ${keys.filterPack(entity.def.collection, '').PK} is ${pack?.[`r:${entity.doc.id}`] === undefined ? 'missing' : 'out of date'}`,
    () => [
      unchanged(scan, entity),
      packOp(entity.def.collection, entity.doc.id, filterRecordOf(entity.def, entity.doc)),
    ],
  );
}

/** The entity a derived item belongs to, from its key: `{collection, id}`; undefined for items of no entity. */
function ownerOf(item: Item): { collection: string; id: string } | undefined {
  const pk = String(item.PK);
  const sk = String(item.SK);
  const parts = pk.split('#');
  if (pk.startsWith('UNIQUE#')) return { collection: parts[1]!, id: String(item.entityId) };
  if (pk.startsWith('IDS#') || pk.startsWith('ROLE#')) return { collection: parts[1]!, id: sk };
  if (pk.startsWith('SELECT#')) {
    const at = sk.indexOf('#');
    return { collection: sk.slice(0, at), id: sk.slice(at + 1) };
  }
  if (sk.startsWith('REFBY#')) {
    const [, collection, id] = sk.split('#');
    return { collection: collection!, id: id! };
  }
  return undefined;
}

/**
 * Derived items: each must be one its owner's current document expects (fix: remove it). Owners are read together;
 * an owner that is gone leaves every item of its own stale.
 */
async function checkDerived(scan: Scan, derived: readonly Item[]): Promise<void> {
  const owners = derived.map((item) => ({ item, owner: ownerOf(item)! }));
  const stored = await read(
    scan,
    owners
      .filter(({ owner }) => definitionOf(owner.collection))
      .map(({ owner }) => keys.entity(owner.collection, owner.id)),
  );
  const expectedOf = new Map<string, Set<string>>();
  for (const { item, owner } of owners) {
    const def = definitionOf(owner.collection);
    const entityKey = itemKeyOf(keys.entity(owner.collection, owner.id));
    const entity = def && stored.get(entityKey) ? entityOf(stored.get(entityKey)!) : undefined;
    if (entity === 'unreadable') continue;
    if (entity && !expectedOf.has(entityKey)) {
      expectedOf.set(
        entityKey,
        new Set(expectedItemsOf(entity.def, entity.doc).map(({ item: want }) => itemKeyOf(want))),
      );
    }
    if (entity && expectedOf.get(entityKey)!.has(itemKeyOf(item as { PK: string; SK: string }))) continue;
    const why = entity ? `which no longer holds it` : `which does not exist`;
    const ops = () => [
      ...(entity ? [unchanged(scan, entity)] : []),
      {
        item: {
          Delete: {
            TableName: scan.deps.store.tableName,
            Key: { PK: item.PK, SK: item.SK },
            // Only the item as read: a write that made it current again since is kept.
            ConditionExpression: 'attribute_exists(PK)',
          },
        },
      } as WriteOp,
    ];
    await repair(scan, `${item.PK} / ${item.SK} belongs to ${owner.collection} ${owner.id}, ${why}`, ops);
  }
}

/** Filter packs: every record must be of a live entity (fix: remove the record). The page's packs read together. */
async function checkPacks(scan: Scan, packs: readonly Item[]): Promise<void> {
  const records = packs.flatMap((pack) => {
    const collection = String(pack.PK).slice('FILTERS#'.length);
    return Object.keys(pack)
      .filter((name) => name.startsWith('r:'))
      .map((name) => ({ pack, collection, id: name.slice(2) }));
  });
  if (records.length === 0) return;
  const stored = await read(
    scan,
    records.map(({ collection, id }) => keys.entity(collection, id)),
  );
  for (const { pack, collection, id } of records) {
    if (stored.has(itemKeyOf(keys.entity(collection, id)))) continue;
    await repair(
      scan,
      `${pack.PK} / ${pack.SK} holds the filter record of ${collection} ${id}, which does not exist`,
      () => [packOp(collection, id, undefined)],
    );
  }
}

/** Where an API session's id points to its item: what says the session still exists. */
function apiSessionPointer(id: string) {
  return { PK: `${API_SESSIONS_COLLECTION}#${id}`, SK: 'ID' };
}

/**
 * Items kept per owner outside the kit, which go with their owner: an API session's posture data, an identity's failed
 * service requests (fix: remove the item whose owner is gone).
 */
const OWNED_ITEMS = [
  { prefix: 'POSTURE#', what: 'posture data', owner: 'API session', ownerKey: apiSessionPointer },
  {
    prefix: 'FAILED-SESSIONS#',
    what: 'failed service requests',
    owner: 'identity',
    ownerKey: (id: string) => keys.entity('identities', id),
  },
] as const;

async function checkOwnedItems(scan: Scan, items: readonly Item[]): Promise<void> {
  const owned = items.flatMap((item) => {
    const kind = OWNED_ITEMS.find(({ prefix }) => String(item.PK).startsWith(prefix));
    return kind ? [{ item, kind, ownerId: String(item.PK).slice(kind.prefix.length) }] : [];
  });
  const stored = await read(
    scan,
    owned.map(({ kind, ownerId }) => kind.ownerKey(ownerId)),
  );
  for (const { item, kind, ownerId } of owned) {
    if (stored.has(itemKeyOf(kind.ownerKey(ownerId)))) continue;
    await repair(scan, `${kind.what} ${item.PK} belongs to ${kind.owner} ${ownerId}, which no longer exists`, () => [
      remove(scan, { PK: item.PK, SK: item.SK }),
    ]);
  }
}

/** Role catalogs: an entry per attribute in use, and none for an attribute nobody holds. */
/** Role-catalog entries checked at once: each is one query for any member of its role. */
const CATALOG_CONCURRENCY = 16;

async function checkCatalogEntries(scan: Scan, entries: readonly Item[]): Promise<void> {
  const held = await mapBounded(entries, CATALOG_CONCURRENCY, async (entry) => {
    const collection = String(entry.PK).slice('ROLES#'.length);
    scan.pointReads++;
    const { Items } = await scan.deps.store.db.send(
      new QueryCommand({
        TableName: scan.deps.store.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': keys.roleMember(collection, String(entry.SK), '').PK },
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    return (Items ?? []).length > 0;
  });
  for (const [index, entry] of entries.entries()) {
    if (held[index]) continue;
    const collection = String(entry.PK).slice('ROLES#'.length);
    await repair(
      scan,
      `the ${collection} role catalog lists #${String(entry.SK)}, which no ${collection} holds`,
      () => [remove(scan, entry as { PK: string; SK: string })],
    );
  }
}

async function checkCatalogOfMembers(scan: Scan, members: readonly Item[]): Promise<void> {
  const entries = [
    ...new Map(
      members.map((member) => {
        const [, collection, ...rest] = String(member.PK).split('#');
        const entry = keys.roleCatalog(collection!, rest.join('#'));
        return [itemKeyOf(entry), entry];
      }),
    ).values(),
  ];
  const unchecked = entries.filter((entry) => !scan.catalogChecked.has(itemKeyOf(entry)));
  for (const entry of unchecked) scan.catalogChecked.add(itemKeyOf(entry));
  if (unchecked.length === 0) return;
  const stored = await read(scan, unchecked);
  for (const entry of unchecked) {
    if (stored.has(itemKeyOf(entry))) continue;
    await repair(
      scan,
      `the ${entry.PK.slice('ROLES#'.length)} role catalog lacks #${entry.SK}, which is in use`,
      () => [put(scan, entry)],
    );
  }
}

/**
 * API sessions: one whose identity is gone should have gone with it, and one past the TTL's backstop should have been
 * deleted by DynamoDB (fix: remove either, with the session counter). Sessions merely idle past the timeout are
 * removed when met, by design: not findings. Answers how many live on.
 */
async function checkApiSessions(scan: Scan, items: readonly Item[]): Promise<number> {
  const identities = await read(
    scan,
    items.map((item) => keys.entity('identities', String(item.identityId))),
  );
  const nowEpoch = scan.deps.now().getTime() / 1000;
  let removed = 0;
  for (const item of items) {
    const session = toSession(item);
    const orphan = !identities.has(itemKeyOf(keys.entity('identities', session.identityId)));
    const overdue = Number(item.expiresAtEpoch ?? Number.POSITIVE_INFINITY) < nowEpoch;
    if (!orphan && !overdue) continue;
    const description = orphan
      ? `API session ${session.id} belongs to identity ${session.identityId}, which does not exist`
      : `API session ${session.id} expired long ago and is still stored`;
    if (scan.mode === 'check') {
      scan.findings.add(description, false);
      continue;
    }
    await removeSessions(scan.deps, [session]);
    scan.findings.add(description, true);
    removed++;
  }
  return items.length - removed;
}

/** Sorts one page's items by what they are and checks each kind together. */
async function checkPage(scan: Scan, items: readonly Item[]): Promise<void> {
  const entities: Entity[] = [];
  const derived: Item[] = [];
  const packs: Item[] = [];
  const catalog: Item[] = [];
  const members: Item[] = [];
  const apiSessions: Item[] = [];
  const ownedItems: Item[] = [];
  for (const item of items) {
    const pk = String(item.PK);
    if (pk.startsWith(INTEGRITY_PREFIX)) continue;
    const entity = entityOf(item);
    if (entity === 'unreadable') {
      scan.findings.add(`${pk} does not parse as its type's document`, false);
      continue;
    }
    if (entity) entities.push(entity);
    else if (pk.startsWith('APISESSION#')) apiSessions.push(item);
    else if (pk.startsWith('FILTERS#')) packs.push(item);
    else if (OWNED_ITEMS.some(({ prefix }) => pk.startsWith(prefix))) ownedItems.push(item);
    else if (pk.startsWith('ROLES#')) catalog.push(item);
    else if (ownerOf(item)) {
      derived.push(item);
      if (pk.startsWith('ROLE#')) members.push(item);
    }
  }
  await checkEntities(scan, entities);
  if (derived.length > 0) await checkDerived(scan, derived);
  if (members.length > 0) await checkCatalogOfMembers(scan, members);
  await checkPacks(scan, packs);
  if (ownedItems.length > 0) await checkOwnedItems(scan, ownedItems);
  await checkCatalogEntries(scan, catalog);
  if (apiSessions.length > 0) {
    const live = await checkApiSessions(scan, apiSessions);
    scan.counts[API_SESSIONS_COLLECTION] = (scan.counts[API_SESSIONS_COLLECTION] ?? 0) + live;
  }
}

/**
 * Scans one segment of the table and checks every item it reads against the entity declarations (see
 * `expected-items.ts`): entities against what they imply, derived items against the entities they belong to.
 */
export const scanSegment: ScanSegment = async (deps, input) => {
  const scan: Scan = {
    deps,
    mode: input.mode,
    findings: new Findings(),
    counts: {},
    catalogChecked: new Set(),
    pointReads: 0,
  };
  let itemsScanned = 0;
  const pages = paginateScan(
    { client: deps.store.db, pageSize: PAGE_SIZE },
    {
      TableName: deps.store.tableName,
      Segment: input.segment,
      TotalSegments: input.totalSegments,
      ConsistentRead: true,
    },
  );
  for await (const page of pages) {
    const items = page.Items ?? [];
    itemsScanned += items.length;
    await checkPage(scan, items);
  }
  return {
    findings: scan.findings.list,
    truncated: scan.findings.truncated,
    entityCounts: scan.counts,
    itemsScanned,
    pointReads: scan.pointReads,
  };
};
