import { definitionOf } from '../entities/definitions.ts';
import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import { ApiError } from '../errors/api-error.ts';
import { MAX_TRANSACTION_ITEMS, type Stored, TransactionTooLargeError } from './entity-store.ts';
import { type Referrer, referencesTo } from './index-queries.ts';
import { itemCount, type NamedEntity, takeOutNamedRoles, writesBeside } from './policies-naming.ts';
import type { StoreContext } from './store-context.ts';
import type { WriteOp } from './write-op.ts';

/**
 * Writes that go with a delete beyond the kit's own (an identity's API sessions), given how many transaction items
 * are still free.
 */
export type DependentOps = (room: number) => Promise<readonly WriteOp[]>;

/** 409 `CAN_NOT_DELETE_REFERENCED_ENTITY`, naming what still points at the entity. */
function referencedError(label: string, id: string, referrers: readonly Referrer[]): ApiError {
  const first = referrers[0]!;
  const ids = referrers.filter((r) => r.collection === first.collection).map((r) => r.id);
  return new ApiError('CAN_NOT_DELETE_REFERENCED_ENTITY', {
    cause: {
      field: first.field,
      reason: `${label} ${id} is referenced by ${first.collection}: [${ids.join(', ')}]`,
      value: ids,
    },
  });
}

/** The deletes of the children that go with their parent (`cascade` links), with everything the kit keeps for them. */
async function cascadeOps(deps: StoreContext, children: readonly Referrer[]): Promise<WriteOp[]> {
  const byCollection = new Map<string, string[]>();
  for (const child of children)
    byCollection.set(child.collection, [...(byCollection.get(child.collection) ?? []), child.id]);
  const ops: WriteOp[] = [];
  for (const [collection, ids] of byCollection) {
    const def = definitionOf(collection);
    if (!def) throw new Error(`a cascade link names ${collection}, which is not a declared entity type`);
    // One level: a child type that has children of its own needs them declared as children of the parent too.
    for (const doc of await deps.store.getMany(def, ids)) ops.push(...deps.store.deleteOps(def, doc));
  }
  return ops;
}

/** Room kept in a drain's transaction for the cascade deletes (each child's item, markers, links, counter). */
const DRAIN_ROOM = MAX_TRANSACTION_ITEMS;
/** How many links a drain reads at a time. */
const DRAIN_PAGE = 50;

/**
 * Deletes `cascade` children of a marked entity, a transaction at a time, until what is left fits the final delete's
 * transaction. The mark stops new links from being added meanwhile; each child goes whole (its own items all in one
 * transaction), so a drain that stops half way leaves fewer children and nothing broken, and the next delete goes on.
 */
async function drainCascadeChildren(deps: StoreContext, def: EntityDefinition, id: string): Promise<void> {
  for (;;) {
    const links = await referencesTo(deps.store, def.collection, id, DRAIN_PAGE);
    if (links.some((link) => link.onTargetDelete !== 'cascade')) return;
    if (links.length < DRAIN_PAGE) {
      // Few enough to try in the final transaction when their deletes fit it.
      if ((await cascadeOps(deps, links)).length <= MAX_TRANSACTION_ITEMS / 2) return;
    }
    let batch: WriteOp[] = [];
    for (const link of links) {
      const ops = await cascadeOps(deps, [link]);
      if (batch.length + ops.length > DRAIN_ROOM) break;
      batch = [...batch, ...ops];
    }
    if (batch.length === 0) return;
    await deps.store.transact(batch);
  }
}

/** How a delete goes beyond the entity's own items. */
export interface DeleteOptions {
  /** Its `cascade` children may be more than one transaction holds: they are deleted in transactions of their own first. */
  readonly drainCascades?: boolean;
  /** Other entities its `dependents` delete with it (a tunneling router's identity), whose `@id` policies lose too. */
  readonly namedWith?: readonly NamedEntity[];
}

/**
 * Deletes an entity the way every link between entities stays whole (see `Reference` in `entity-definition.ts`):
 * mark it so no new link can reach it, read its links, refuse while a `refuse` link exists, and delete it with its
 * `cascade` children, its `@id` taken out of the policies naming it and `dependents` in one transaction conditioned on
 * the marked version. A concurrent change of the entity or of a policy naming it surfaces as a retryable
 * `ConcurrentModificationError`; anything that stops the delete clears the mark.
 */
export async function deleteEntity<D extends BaseDocument>(
  deps: StoreContext,
  def: EntityDefinition<D>,
  stored: Stored<D>,
  dependents?: DependentOps,
  options: DeleteOptions = {},
): Promise<void> {
  const marked = await deps.store.markDeleting(def, stored);
  try {
    // A parent of many children (a CA's authenticators) sheds them in transactions of their own first.
    if (options.drainCascades) {
      await drainCascadeChildren(deps, def as unknown as EntityDefinition, stored.doc.id);
    }
    // One more than a transaction holds: past that the delete is refused as too large anyway.
    const links = await referencesTo(deps.store, def.collection, stored.doc.id, MAX_TRANSACTION_ITEMS + 1);
    const refusing = links.filter((link) => link.onTargetDelete !== 'cascade');
    if (refusing.length > 0) throw referencedError(def.label, stored.doc.id, refusing);
    const ops = [
      ...deps.store.deleteOps(def, stored.doc, marked),
      ...(await cascadeOps(
        deps,
        links.filter((link) => link.onTargetDelete === 'cascade'),
      )),
    ];
    // Refused before any policy is touched: a delete that cannot commit must not take its `@id` out of them.
    if (ops.length > MAX_TRANSACTION_ITEMS) throw new TransactionTooLargeError(ops.length);
    // Policies naming it by `@id` take up to half the room left; more are updated in transactions of their own first.
    const named = [{ collection: def.collection, id: stored.doc.id }, ...(options.namedWith ?? [])];
    const policies = await takeOutNamedRoles(deps.store, named, Math.floor((MAX_TRANSACTION_ITEMS - ops.length) / 2));
    const extra = (await dependents?.(MAX_TRANSACTION_ITEMS - ops.length - itemCount(policies))) ?? [];
    await deps.store.transact([...ops, ...writesBeside(policies, extra), ...extra]);
  } catch (error) {
    // The caller hears why the delete stopped; a mark left behind lapses by itself after `DELETE_MARK_MS`.
    await deps.store.unmarkDeleting(def, stored.doc.id, marked).catch((unmarkError: unknown) =>
      deps.logger.warn('could not clear a delete mark', {
        collection: def.collection,
        id: stored.doc.id,
        error: unmarkError instanceof Error ? unmarkError.message : String(unmarkError),
      }),
    );
    throw error;
  }
}
