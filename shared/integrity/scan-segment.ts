import { API_SESSIONS_COLLECTION } from '../auth/api-session.ts';
import { removeSessions, toSession } from '../auth/api-session-store.ts';
import { definitionOf } from '../entities/definitions.ts';
import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import { mapBounded } from '../map-bounded.ts';
import type { Deps } from '../ports/deps.ts';
import { isSessionPointer } from '../store/api-session-items.ts';
import { isRetiredOwnMarker } from '../store/change-markers.ts';
import {
  type DerivedItem,
  derivedItems,
  derivedKindOf,
  indexKeysAsLaid,
  itemKeyOf,
  layIndexKeysOp,
  matches,
  putDerivedOp,
  referenceValues,
  removeDerivedOp,
  rewriteOf,
  roleOfMember,
  selectionKeysOf,
} from '../store/derived-items.ts';
import { documentOf, itemKindOf, keys } from '../store/keys.ts';
import { namingOps, unnamingOp } from '../store/naming-field.ts';
import { ownedKindOf } from '../store/owned-items.ts';
import { withoutNamedRoles } from '../store/policies-naming.ts';
import { hasHolder, restoreIfHeld } from '../store/role-catalog.ts';
import { segmentPages } from '../store/table-snapshot.ts';
import { itemOps, type WriteOp } from '../store/write-op.ts';
import { Findings } from './findings.ts';
import type { IntegrityMode, ScanSegment } from './integrity-types.ts';
import { type RepairPlan, writeRepair } from './repair.ts';

/** Items a scan page reads; its point reads are batched per page. */
const PAGE_SIZE = 250;
/** The orchestration's own items (lock, results, findings): never checked. */

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

/**
 * Writes a repair (planned again from a fresh read each time it loses to a concurrent writer, see `writeRepair`), or
 * reports why it could not be written.
 */
async function repair(scan: Scan, description: string, plan: RepairPlan): Promise<void> {
  if (scan.mode === 'check') {
    scan.findings.add(description, false);
    return;
  }
  try {
    await writeRepair(scan.deps, plan);
    scan.findings.add(description, true);
  } catch (error) {
    scan.deps.logger.warn('integrity fix not written', { description, reason: (error as Error).message });
    scan.findings.add(`${description} (not fixed: ${(error as Error).message})`, false);
  }
}

/**
 * The entity under a key among items read afresh for a repair; undefined when it is gone (or its collection is not a
 * declared type).
 */
function entityAmong(stored: ReadonlyMap<string, Item>, key: { PK: string; SK: string }): Entity | undefined {
  const item = stored.get(itemKeyOf(key));
  const entity = item ? entityOf(item) : undefined;
  // A repair is never planned from a document that does not parse: that is a finding of its own.
  if (entity === 'unreadable') throw new Error(`${key.PK} no longer parses as its type's document`);
  return entity;
}

/** The entity stored under a key as it is now (see `entityAmong`). */
async function readEntity(scan: Scan, key: { PK: string; SK: string }): Promise<Entity | undefined> {
  return entityAmong(await read(scan, [key]), key);
}

/**
 * A repair planned from an entity: as scanned first, then as it is now. An entity deleted since took its derived
 * items with it, so there is nothing left to repair.
 */
function planFromEntity(
  scan: Scan,
  scanned: Entity,
  opsFor: (entity: Entity, fresh: boolean) => Promise<readonly WriteOp[]> | readonly WriteOp[],
): RepairPlan {
  return async (fresh) => {
    const entity = fresh ? await readEntity(scan, keys.entity(scanned.def.collection, scanned.doc.id)) : scanned;
    return entity ? opsFor(entity, fresh) : [];
  };
}

/** A check that the entity is still as scanned, so a repair never undoes a write made since. */
function unchanged(scan: Scan, entity: Entity): WriteOp {
  return itemOps.versionIs(
    scan.deps.store.tableName,
    keys.entity(entity.def.collection, entity.doc.id),
    entity.version,
  );
}

const put = (scan: Scan, item: Item): WriteOp => itemOps.put(scan.deps.store.tableName, item);
const remove = (scan: Scan, key: { PK: unknown; SK: unknown }): WriteOp =>
  itemOps.remove(scan.deps.store.tableName, key);

/**
 * Live entities: every derived item present and as the document says (fix: write it), every reference's target
 * alive (fix: a child whose parent is gone goes, as the parent's delete would have taken it), every entity a policy
 * names by `@id` alive (fix: take the `@id` out). The filter record is the id-order item's, a derived item like the rest.
 */
async function checkEntities(scan: Scan, entities: readonly Entity[]): Promise<void> {
  const expected = entities.map((entity) => ({ entity, items: derivedItems(entity.def, entity.doc) }));
  const targets = entities.flatMap((entity) => [
    ...(entity.def.references ?? []).flatMap((reference) =>
      referenceValues(entity.doc, reference).map((id) => keys.entity(reference.collection, id)),
    ),
    ...namedBy(entity).map(({ collection, id }) => keys.entity(collection, id)),
    ...[entity.def.namedOn?.(entity.doc)].flatMap((holder) =>
      holder ? [keys.entity(holder.collection, holder.id)] : [],
    ),
    ...namedLive(entity).map(({ collection, id }) => keys.entity(collection, id)),
  ]);
  const sessionParents = entities.flatMap((entity) => {
    const parent = entity.def.parentOf?.(entity.doc);
    return parent?.collection === API_SESSIONS_COLLECTION ? [keys.apiSessionPointer(parent.id)] : [];
  });
  const stored = await read(scan, [
    ...expected.flatMap(({ items }) => items.map(({ item }) => item)),
    ...targets,
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
    if (parent?.collection === API_SESSIONS_COLLECTION && !stored.has(itemKeyOf(keys.apiSessionPointer(parent.id)))) {
      if (scan.mode === 'check') count(scan, entity);
      await repair(
        scan,
        `${label(entity)} belongs to API session ${parent.id}, which no longer exists`,
        deleteOrphan(scan, entity, stored),
      );
      continue;
    }
    if (orphanedBy) {
      // Counted only while it lives on: a fix deletes it (and moves the counter) now.
      if (scan.mode === 'check') count(scan, entity);
      await repair(
        scan,
        `${label(entity)} belongs to a ${orphanedBy.collection} that no longer exists (${orphanedBy.field})`,
        deleteOrphan(scan, entity, stored),
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
    await checkNamed(scan, entity, stored);
    await checkNamedOn(scan, entity, stored);
    await checkNamesLive(scan, entity, stored);
    for (const want of items) await checkExpected(scan, entity, want, stored.get(itemKeyOf(want.item)));
  }
}

/** The entities a policy names by `@id`, each with the role field naming it; none for other types. */
function namedBy(entity: Entity): { collection: string; id: string; field: string }[] {
  return [...selectionKeysOf(entity.def, entity.doc).values()].flatMap(({ selector, namedId }) =>
    namedId === undefined ? [] : [{ collection: selector.collection, id: namedId, field: selector.field }],
  );
}

/**
 * A policy naming by `@id` an entity that no longer exists: a delete takes the `@id` out with it, so one left behind
 * was deleted outside the API (fix: take it out through the store's version-checked replace, as the delete does).
 */
async function checkNamed(scan: Scan, entity: Entity, stored: ReadonlyMap<string, Item>): Promise<void> {
  const gone = namedBy(entity).filter(({ collection, id }) => !stored.has(itemKeyOf(keys.entity(collection, id))));
  if (gone.length === 0) return;
  const what = gone.map(({ collection, id, field }) => `${collection} ${id} (${field})`).join(', ');
  await repair(
    scan,
    `${label(entity)} names by @id what no longer exists: ${what}`,
    planFromEntity(scan, entity, (current) => {
      const after = withoutNamedRoles(current.def, current.doc, gone);
      return after === current.doc ? [] : scan.deps.store.replaceOps(current.def, current, after);
    }),
  );
}

/**
 * A live entity its holder does not name (`EntityDefinition.namedOn`): stored before holders kept the field, or
 * written outside the API. Harmless (readers of the holder then read the entity), but it costs them that read (fix:
 * set the field, in a transaction conditioned on the entity being still as read, so a fix never names an entity
 * deleted meanwhile). A holder naming another entity of the kind is a finding with no fix.
 */
async function checkNamedOn(scan: Scan, entity: Entity, stored: ReadonlyMap<string, Item>): Promise<void> {
  const holder = entity.def.namedOn?.(entity.doc);
  const item = holder ? stored.get(itemKeyOf(keys.entity(holder.collection, holder.id))) : undefined;
  if (!holder || !item || item[holder.field] === entity.doc.id) return;
  const what = `${label(entity)} is not named by ${holder.collection} ${holder.id} (${holder.field})`;
  if (item[holder.field] !== undefined) {
    scan.findings.add(`${what}, which names ${String(item[holder.field])}`, false);
    return;
  }
  await repair(
    scan,
    what,
    planFromEntity(scan, entity, (current) => [
      unchanged(scan, current),
      ...namingOps(scan.deps.store.tableName, current.def, current.doc, 'set'),
    ]),
  );
}

/** What the entity's naming fields name (`EntityDefinition.namesLive`): an identity's authenticators. */
function namedLive(entity: Entity): { field: string; collection: string; id: string }[] {
  const doc = entity.doc as unknown as Record<string, unknown>;
  return (entity.def.namesLive ?? []).flatMap(({ field, collection }) => {
    const id = doc[field];
    return typeof id === 'string' ? [{ field, collection, id }] : [];
  });
}

/**
 * A naming field that names an entity no longer stored (deleted outside the API): its readers would take it for live
 * (an authenticator's sessions would go on). Fix: remove the field, only while it still names that entity.
 */
async function checkNamesLive(scan: Scan, entity: Entity, stored: ReadonlyMap<string, Item>): Promise<void> {
  for (const { field, collection, id } of namedLive(entity)) {
    if (stored.has(itemKeyOf(keys.entity(collection, id)))) continue;
    const holder = { collection: entity.def.collection, id: entity.doc.id, field };
    await repair(scan, `${label(entity)} names ${collection} ${id} (${field}), which does not exist`, () => [
      unnamingOp(scan.deps.store.tableName, holder, id),
    ]);
  }
}

/**
 * Deletes a child whose parent is gone, whole, as the parent's delete would have. Version-checked; a child changed
 * since is read again and still deleted: ids are never reused, so its parent cannot come back (nor a holder naming it
 * that is gone: there is no field to remove).
 */
function deleteOrphan(scan: Scan, scanned: Entity, stored: ReadonlyMap<string, Item>): RepairPlan {
  const holderStored = (op: WriteOp) =>
    !op.naming || stored.has(itemKeyOf(keys.entity(op.naming.holder.collection, op.naming.holder.id)));
  return planFromEntity(scan, scanned, (entity) =>
    scan.deps.store.deleteOps(entity.def, entity.doc, entity.version).filter(holderStored),
  );
}

async function checkExpected(scan: Scan, entity: Entity, want: DerivedItem, actual: Item | undefined): Promise<void> {
  if (actual && matches(want, actual)) return;
  // A marker of this entity's own value that lacks what its type's markers now carry is out of date, not shared.
  if (actual && want.kind.exclusive && actual.entityId !== want.item.entityId) {
    scan.findings.add(
      `${label(entity)} shares a unique value (${want.item.SK}) with ${entity.def.label} ${String(actual.entityId)}`,
      false,
    );
    return;
  }
  const what = actual ? 'is out of date' : 'is missing';
  await repair(
    scan,
    `${label(entity)}: its ${want.kind.name} ${want.item.PK} / ${want.item.SK} ${what}`,
    planFromEntity(scan, entity, async (current, fresh) => {
      const wanted = fresh ? await stillWanted(scan, current, want) : actual ? rewriteOf(want) : want;
      return wanted ? [unchanged(scan, current), restored(scan, wanted)] : [];
    }),
  );
}

/**
 * The write that puts a derived item back, as the store's writes put it: a unique value claimed, a role member with
 * its catalog entry after the commit (the catalog check of the same fix may have pruned the entry while the member was
 * missing: nobody seemed to hold the attribute).
 */
function restored(scan: Scan, wanted: DerivedItem): WriteOp {
  return putDerivedOp(scan.deps.store, wanted);
}

/**
 * The item under `want`'s key as the entity now implies it, when the table still lacks it as such; undefined when it
 * is no longer implied or is now right. A unique value taken meanwhile by another entity cannot be repaired.
 */
async function stillWanted(scan: Scan, entity: Entity, want: DerivedItem): Promise<DerivedItem | undefined> {
  const key = itemKeyOf(want.item);
  const now = derivedItems(entity.def, entity.doc).find((expected) => itemKeyOf(expected.item) === key);
  if (!now) return undefined;
  const actual = (await read(scan, [now.item])).get(key);
  if (!actual) return now;
  if (matches(now, actual)) return undefined;
  if (now.kind.exclusive && actual.entityId !== now.item.entityId) {
    throw new Error(`${now.item.SK} is now held by ${entity.def.label} ${String(actual.entityId)}`);
  }
  return rewriteOf(now);
}

/** The keys of the derived items an entity's current document implies. */
function impliedKeys(entity: Entity): Set<string> {
  return new Set(derivedItems(entity.def, entity.doc).map(({ item }) => itemKeyOf(item)));
}

/**
 * Removes a derived item its owner does not imply (guarded by the owner's version when it lives). A role member's
 * removal prunes the catalog entry after it, as the store's own removals do: the entry may have been checked, and
 * found held by this very member, before the member went.
 */
function staleItemOps(scan: Scan, item: Item, owner: Entity | undefined): WriteOp[] {
  const { kind } = derivedKindOf(item)!;
  // Only the item as read: a write that made it current again since is kept.
  const removal = removeDerivedOp(scan.deps.store, kind, { PK: item.PK, SK: item.SK }, { ifStored: true });
  return [...(owner ? [unchanged(scan, owner)] : []), removal];
}

/** A stale derived item's removal: as scanned, then as the item and its owner are now (gone, or implied again: done). */
function removeStale(scan: Scan, item: Item, scannedOwner: Entity | undefined): RepairPlan {
  const owner = derivedKindOf(item)!.owner;
  const ownerKey = keys.entity(owner.collection, owner.id);
  return async (fresh) => {
    if (!fresh) return staleItemOps(scan, item, scannedOwner);
    const itemKey = { PK: String(item.PK), SK: String(item.SK) };
    const declared = definitionOf(owner.collection) !== undefined;
    const stored = await read(scan, declared ? [itemKey, ownerKey] : [itemKey]);
    if (!stored.has(itemKeyOf(itemKey))) return [];
    const ownerNow = entityAmong(stored, ownerKey);
    return ownerNow && impliedKeys(ownerNow).has(itemKeyOf(itemKey)) ? [] : staleItemOps(scan, item, ownerNow);
  };
}

/**
 * Derived items: each must be one its owner's current document expects (fix: remove it). Owners are read together;
 * an owner that is gone leaves every item of its own stale. Answers the keys of the stale items found.
 */
async function checkDerived(scan: Scan, derived: readonly Item[]): Promise<Set<string>> {
  const owners = derived.map((item) => ({ item, owner: derivedKindOf(item)!.owner }));
  const stored = await read(
    scan,
    owners
      .filter(({ owner }) => definitionOf(owner.collection))
      .map(({ owner }) => keys.entity(owner.collection, owner.id)),
  );
  const impliedOf = new Map<string, Set<string>>();
  const stale = new Set<string>();
  for (const { item, owner } of owners) {
    const def = definitionOf(owner.collection);
    const entityKey = itemKeyOf(keys.entity(owner.collection, owner.id));
    const entity = def && stored.get(entityKey) ? entityOf(stored.get(entityKey)!) : undefined;
    if (entity === 'unreadable') continue;
    if (entity && !impliedOf.has(entityKey)) impliedOf.set(entityKey, impliedKeys(entity));
    if (entity && impliedOf.get(entityKey)!.has(itemKeyOf(item as { PK: string; SK: string }))) continue;
    stale.add(itemKeyOf(item as { PK: string; SK: string }));
    const why = entity ? `which no longer holds it` : `which does not exist`;
    await repair(
      scan,
      `${item.PK} / ${item.SK} belongs to ${owner.collection} ${owner.id}, ${why}`,
      removeStale(scan, item, entity),
    );
  }
  return stale;
}

/**
 * Items of a retired layout that nothing reads or writes any more, so each left in a table from before is a finding
 * (fix: remove it): filter packs (records live on the id-order items alone, `filter-records.ts`), and identities'
 * own change markers as items of their own (the marker lives on the identity's item, `change-markers.ts`).
 */
async function checkRetired(scan: Scan, items: readonly Item[], what: string): Promise<void> {
  for (const item of items) {
    await repair(scan, `${item.PK} / ${item.SK} is a retired ${what}`, () => [
      // Removing an item already gone is no failure: a retry finds nothing left to do.
      itemOps.remove(scan.deps.store.tableName, { PK: item.PK, SK: item.SK }),
    ]);
  }
}

/** Whether an item exists now (a fresh read for a repair planned again). */
async function exists(scan: Scan, key: { PK: string; SK: string }): Promise<boolean> {
  return (await read(scan, [key])).has(itemKeyOf(key));
}

async function checkOwnedItems(scan: Scan, items: readonly Item[]): Promise<void> {
  const owned = items.flatMap((item) => {
    const found = ownedKindOf(item);
    return found ? [{ item, ...found }] : [];
  });
  const stored = await read(
    scan,
    owned.map(({ kind, ownerId }) => kind.ownerKey(ownerId)),
  );
  for (const { item, kind, ownerId } of owned) {
    const ownerKey = kind.ownerKey(ownerId);
    if (stored.has(itemKeyOf(ownerKey))) continue;
    await repair(
      scan,
      `${kind.what} ${item.PK} belongs to ${kind.owner} ${ownerId}, which no longer exists`,
      async (fresh) => (fresh && (await exists(scan, ownerKey)) ? [] : [remove(scan, { PK: item.PK, SK: item.SK })]),
    );
  }
}

/** Role-catalog entries checked at once: each is one query for any member of its role. */
const CATALOG_CONCURRENCY = 16;

/** Whether a role has a member now, counted as one of the scan's point reads. */
function held(scan: Scan, collection: string, attribute: string): Promise<boolean> {
  scan.pointReads++;
  return hasHolder(scan.deps.store, collection, attribute);
}

/**
 * Removes a catalog entry nobody holds; a holder that commits meanwhile has its entry put back after, as
 * `pruneCatalog` does for the store's own removals.
 */
function pruneEntry(scan: Scan, collection: string, attribute: string): RepairPlan {
  return async (fresh) => {
    if (fresh && (await held(scan, collection, attribute))) return [];
    const removal = remove(scan, keys.roleCatalog(collection, attribute));
    return [{ ...removal, afterCommit: () => restoreIfHeld(scan.deps.store, collection, attribute) }];
  };
}

/**
 * Role catalogs: none for an attribute nobody holds. An entry held only by stale members is left to their removal,
 * which prunes it (see `staleItemOps`).
 */
async function checkCatalogEntries(scan: Scan, entries: readonly Item[]): Promise<void> {
  const catalogued = entries.map((entry) => ({
    collection: String(entry.PK).slice('ROLES#'.length),
    attribute: String(entry.SK),
  }));
  const holders = await mapBounded(catalogued, CATALOG_CONCURRENCY, ({ collection, attribute }) =>
    held(scan, collection, attribute),
  );
  for (const [index, { collection, attribute }] of catalogued.entries()) {
    if (holders[index]) continue;
    await repair(
      scan,
      `the ${collection} role catalog lists #${attribute}, which no ${collection} holds`,
      pruneEntry(scan, collection, attribute),
    );
  }
}

/** Role catalogs: an entry for each attribute a live member holds (`members` are the page's members still implied). */
async function checkCatalogOfMembers(scan: Scan, members: readonly Item[]): Promise<void> {
  const entries = [
    ...new Map(
      members.map((member) => {
        const { collection, attribute } = roleOfMember(member as { PK: string; SK: string });
        const entry = keys.roleCatalog(collection, attribute);
        return [itemKeyOf(entry), { entry, collection, attribute }];
      }),
    ).values(),
  ];
  const unchecked = entries.filter(({ entry }) => !scan.catalogChecked.has(itemKeyOf(entry)));
  for (const { entry } of unchecked) scan.catalogChecked.add(itemKeyOf(entry));
  if (unchecked.length === 0) return;
  const stored = await read(
    scan,
    unchecked.map(({ entry }) => entry),
  );
  for (const { entry, collection, attribute } of unchecked) {
    if (stored.has(itemKeyOf(entry))) continue;
    await repair(scan, `the ${collection} role catalog lacks #${attribute}, which is in use`, async (fresh) => {
      if (fresh && ((await exists(scan, entry)) || !(await held(scan, collection, attribute)))) return [];
      return [put(scan, entry)];
    });
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

/**
 * API session id pointers whose session item is gone: DynamoDB's TTL deletes the item alone, and a pointer left in the
 * type index keeps naming it (lists skip it and remove it when met). Fix: remove the pointer; the session counter is
 * reconciled against the sessions counted, as for every TTL delete.
 */
async function checkSessionPointers(scan: Scan, pointers: readonly Item[]): Promise<void> {
  const sessionKey = (pointer: Item) => keys.apiSession(String(pointer.tokenHash));
  const stored = await read(scan, pointers.map(sessionKey));
  for (const pointer of pointers) {
    if (stored.has(itemKeyOf(sessionKey(pointer)))) continue;
    const key = { PK: pointer.PK, SK: pointer.SK };
    await repair(scan, `${String(pointer.PK)} points at an API session that no longer exists`, async () => [
      itemOps.remove(scan.deps.store.tableName, key),
    ]);
  }
}

/**
 * Documents whose index keys are not those of their type's layout: a type that left the type index (only types read
 * whole stay in it) keeps its older documents there, each write of theirs paying for the copy, until rewritten; a
 * document of a type read whole that is missing from it would be left out of `readAll` (a session's posture checks).
 * Fix: the item written again with the keys its layout gives, if its version is still the one read.
 */
async function checkIndexKeys(scan: Scan, documents: readonly { item: Item; entity: Entity }[]): Promise<void> {
  for (const { item, entity } of documents) {
    if (indexKeysAsLaid(item, entity.def, entity.doc)) continue;
    await repair(
      scan,
      `${label(entity)} carries index keys its type's layout does not give it`,
      planFromEntity(scan, entity, (now) => [layIndexKeysOp(scan.deps.store.tableName, now.def, now.doc, now.version)]),
    );
  }
}

/** Sorts one page's items by what they are and checks each kind together. */
async function checkPage(scan: Scan, items: readonly Item[]): Promise<void> {
  const entities: Entity[] = [];
  const documents: { item: Item; entity: Entity }[] = [];
  const derived: Item[] = [];
  const packs: Item[] = [];
  const ownMarkers: Item[] = [];
  const catalog: Item[] = [];
  const members: Item[] = [];
  const apiSessions: Item[] = [];
  const sessionPointers: Item[] = [];
  const ownedItems: Item[] = [];
  for (const item of items) {
    const pk = String(item.PK);
    const kind = itemKindOf(pk);
    if (kind === 'integrity') continue;
    const entity = entityOf(item);
    if (entity === 'unreadable') {
      scan.findings.add(`${pk} does not parse as its type's document`, false);
      continue;
    }
    if (entity) {
      entities.push(entity);
      documents.push({ item, entity });
    } else if (kind === 'apiSession') apiSessions.push(item);
    else if (isSessionPointer(item)) sessionPointers.push(item);
    else if (kind === 'retiredFilterPack') packs.push(item);
    else if (isRetiredOwnMarker(item)) ownMarkers.push(item);
    else if (ownedKindOf(item)) ownedItems.push(item);
    else if (kind === 'roleCatalog') catalog.push(item);
    else if (derivedKindOf(item)) {
      derived.push(item);
      if (kind === 'roleMember') members.push(item);
    }
  }
  await checkEntities(scan, entities);
  await checkIndexKeys(scan, documents);
  const stale = derived.length > 0 ? await checkDerived(scan, derived) : new Set<string>();
  // A stale member says nothing of the catalog: its removal prunes the entry when nobody else holds it.
  const liveMembers = members.filter((member) => !stale.has(itemKeyOf(member as { PK: string; SK: string })));
  if (liveMembers.length > 0) await checkCatalogOfMembers(scan, liveMembers);
  await checkRetired(scan, packs, 'filter pack');
  await checkRetired(scan, ownMarkers, "identity's change marker item");
  if (ownedItems.length > 0) await checkOwnedItems(scan, ownedItems);
  await checkCatalogEntries(scan, catalog);
  if (sessionPointers.length > 0) await checkSessionPointers(scan, sessionPointers);
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
  for await (const items of segmentPages(deps.store, input, PAGE_SIZE)) {
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
