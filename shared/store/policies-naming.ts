import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { definitionOf, ENTITY_DEFINITIONS } from '../entities/definitions.ts';
import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import { itemKeyOf } from './derived-items.ts';
import type { Store } from './entity-store.ts';
import { keys } from './keys.ts';
import { transactItemKey } from './naming-field.ts';
import { packTransactions } from './pack-transactions.ts';
import { readOptions } from './read-consistency.ts';
import type { WriteOp } from './write-op.ts';

/**
 * Policies name entities by `@<id>` in their role fields, and each such role is a selection item
 * `SELECT#<collection>#@<id>` (see `Selections`), so the policies naming an entity are one partition. When the entity
 * goes, its `@id` goes from each of them, as the reference controller does; the policies stay, with their other roles.
 */

/** An entity policies may name by `@<id>` in the role fields selecting its collection. */
export interface NamedEntity {
  readonly collection: string;
  readonly id: string;
}

/** One policy's writes taking the `@id`s out: its item, selection items and filter record, which commit together. */
export interface PolicyWrites {
  /** The policy item's `PK|SK`. */
  readonly key: string;
  readonly ops: readonly WriteOp[];
}

/** The policies a query of one entity's `@id` partition reads at a time. */
const NAMING_PAGE = 50;

const POLICY_TYPES = ENTITY_DEFINITIONS.filter((def) => def.selects !== undefined);

/** Whether some policy type selects entities of this collection: only those can be named by `@id`. */
export function selectable(collection: string): boolean {
  return POLICY_TYPES.some((def) => def.selects?.fields.some((selector) => selector.collection === collection));
}

/**
 * A policy's document without the `@id` roles naming `named` in the fields that select their collections; the same
 * document when it names none of them.
 */
export function withoutNamedRoles<D extends BaseDocument>(
  def: EntityDefinition<D>,
  doc: D,
  named: readonly NamedEntity[],
): D {
  let next = doc;
  for (const { field, collection } of def.selects?.fields ?? []) {
    const gone = new Set(named.filter((entity) => entity.collection === collection).map(({ id }) => `@${id}`));
    const roles: unknown = doc[field];
    if (!Array.isArray(roles) || !roles.some((role) => gone.has(role))) continue;
    next = { ...next, [field]: roles.filter((role) => !gone.has(role)) };
  }
  return next;
}

/** The policies naming any of `named`, as `{collection, id}`; `complete` when no partition had more than a page. */
async function namingPage(store: Store, named: readonly NamedEntity[]) {
  const pages = await Promise.all(
    named.map(({ collection, id }) =>
      store.db.send(
        new QueryCommand({
          TableName: store.tableName,
          KeyConditionExpression: 'PK = :pk',
          ExpressionAttributeValues: { ':pk': keys.selection(collection, `@${id}`, '', '').PK },
          ProjectionExpression: 'SK',
          ...readOptions('namingPolicies'),
          Limit: NAMING_PAGE,
        }),
      ),
    ),
  );
  const policies = new Map<string, { collection: string; id: string }>();
  for (const { Items = [] } of pages) {
    for (const { SK } of Items) {
      const sk = String(SK);
      const at = sk.indexOf('#');
      policies.set(sk, { collection: sk.slice(0, at), id: sk.slice(at + 1) });
    }
  }
  return { policies: [...policies.values()], complete: pages.every((page) => !page.LastEvaluatedKey) };
}

/**
 * Each policy's version-checked replace without the `@id`s, through the store's replace path so its selection items
 * and filter record move with it. `updatedAt` is kept: the reference takes the role out without touching the policy.
 * A selection item whose policy is gone or no longer names the entity is stale, and left to the integrity fix.
 */
async function policyWrites(
  store: Store,
  named: readonly NamedEntity[],
  policies: readonly { collection: string; id: string }[],
): Promise<PolicyWrites[]> {
  const writes: PolicyWrites[] = [];
  for (const collection of new Set(policies.map((policy) => policy.collection))) {
    const def = definitionOf(collection);
    if (!def?.selects) continue;
    const ids = policies.filter((policy) => policy.collection === collection).map((policy) => policy.id);
    for (const stored of await store.getManyStored(def, ids)) {
      const after = withoutNamedRoles(def, stored.doc, named);
      if (after === stored.doc) continue;
      writes.push({
        key: itemKeyOf(keys.entity(collection, stored.doc.id)),
        ops: store.replaceOps(def, stored, after),
      });
    }
  }
  return writes;
}

/** How many items policies' writes take in a transaction. */
export function itemCount(writes: readonly PolicyWrites[]): number {
  return writes.reduce((total, { ops }) => total + ops.length, 0);
}

/** The writes of a page of the policies naming `named` (see `namingPage`). */
async function pageOfWrites(store: Store, named: readonly NamedEntity[]) {
  const naming = named.filter(({ collection }) => selectable(collection));
  if (naming.length === 0) return { writes: [], complete: true };
  const { policies, complete } = await namingPage(store, naming);
  return { writes: await policyWrites(store, naming, policies), complete };
}

/**
 * The writes taking the `@id`s of `named` out of the policies naming them, all for the caller's own transaction: for
 * a change that must commit whole or not at all (a router's identity deleted by an update). Past one page the writes
 * are more than a transaction holds, which the transaction refuses as too large.
 */
export async function namedRoleWrites(store: Store, named: readonly NamedEntity[]): Promise<PolicyWrites[]> {
  return (await pageOfWrites(store, named)).writes;
}

/**
 * Takes the `@id`s of `named` out of every policy naming them. The writes are answered for the caller's own
 * transaction (the delete of those entities) when they take at most `room` items; otherwise the policies are updated
 * in transactions of their own first, a page at a time, until what is left fits. The caller has marked the entities
 * as being deleted, so no policy can come to name them meanwhile; a policy changed meanwhile fails its version check
 * (a retryable `ConcurrentModificationError`), and a delete that stops after some policies were updated leaves them
 * without the `@id` of an entity on its way out: the next delete goes on.
 */
export async function takeOutNamedRoles(
  store: Store,
  named: readonly NamedEntity[],
  room: number,
): Promise<PolicyWrites[]> {
  for (;;) {
    const { writes, complete } = await pageOfWrites(store, named);
    if (complete && itemCount(writes) <= room) return writes;
    // A page of nothing but stale selection items: no write of ours takes them out.
    if (writes.length === 0) return [];
    // Each policy whole in one transaction, as few as DynamoDB's item limit allows.
    const transactions = packTransactions(
      store,
      writes.map(({ ops }) => ops),
    );
    for (const transaction of transactions) await store.transact(transaction);
  }
}

/**
 * The policies' writes, less those of policies that other writes of the same transaction already touch (a router's
 * system policy, deleted with it): one transaction may touch an item once.
 */
export function writesBeside(writes: readonly PolicyWrites[], others: readonly WriteOp[]): WriteOp[] {
  const touched = new Set(others.map(({ item }) => transactItemKey(item)));
  return writes.filter(({ key }) => !touched.has(key)).flatMap(({ ops }) => ops);
}
