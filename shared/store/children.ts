import type * as z from 'zod';
import { queryAll } from './index-queries.ts';
import { documentOf, keys } from './keys.ts';
import type { StoreContext } from './store-context.ts';

/** A child item found under a parent in GSI2, grouped by the child's collection. */
export interface Child {
  readonly collection: string;
  readonly doc: Record<string, unknown>;
}

/**
 * Every child of a parent (authenticators, enrollments, API sessions of an identity) in one paged GSI2 query. GSI2 is
 * eventually consistent: fine for views; deletes that must catch every child re-check in their transaction.
 */
export async function listChildren(
  deps: StoreContext,
  collection: string,
  id: string,
  childCollection?: string,
): Promise<Child[]> {
  const items = await queryAll(deps.store, {
    IndexName: 'GSI2',
    KeyConditionExpression: childCollection ? 'GSI2PK = :parent AND begins_with(GSI2SK, :prefix)' : 'GSI2PK = :parent',
    ExpressionAttributeValues: {
      ':parent': keys.parentIndex(collection, id),
      ...(childCollection ? { ':prefix': `${childCollection}#` } : {}),
    },
  });
  return items.map((item) => ({ collection: String(item.GSI2SK).split('#')[0]!, doc: documentOf(item) }));
}

/**
 * The children that parse as `schema`. One damaged item (a bad manual edit, a fault the integrity scan has not repaired
 * yet) must not fail every request that reads its siblings, so it is skipped and logged instead.
 */
export function validChildren<T>(deps: StoreContext, children: readonly Child[], schema: z.ZodType<T>): T[] {
  return children.flatMap((child) => {
    const parsed = schema.safeParse(child.doc);
    if (parsed.success) return [parsed.data];
    deps.logger.warn('skipped a stored child that does not parse', { collection: child.collection, id: child.doc.id });
    return [];
  });
}
