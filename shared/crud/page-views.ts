import type { BaseDocument } from '../entities/entity-definition.ts';
import { mapBounded } from '../map-bounded.ts';
import type { Deps } from '../ports/deps.ts';
import type { EntityApi } from './entity-api.ts';

/** How many views of a page are built at once (each may read DynamoDB). */
export const VIEW_CONCURRENCY = 16;

/** A page of documents as the type shows them: at once when it can share reads, else each on its own. */
export function pageViews<D extends BaseDocument>(
  deps: Deps,
  api: Pick<EntityApi<D, unknown, unknown, unknown>, 'view' | 'viewPage'>,
  docs: readonly D[],
): Promise<unknown[]> {
  return api.viewPage
    ? api.viewPage(deps, docs)
    : mapBounded(docs, VIEW_CONCURRENCY, async (doc) => await api.view(deps, doc));
}

/**
 * A type's `view` and `viewPage` when its views read what others on the page read too (the names of the entities
 * they refer to): `lookups` are made once per page (once per view for a detail), so each name is read once a page.
 */
export function viewsSharing<D, L>(
  lookups: (deps: Deps) => L,
  view: (doc: D, lookups: L) => Promise<unknown> | unknown,
): {
  view(deps: Deps, doc: D): Promise<unknown> | unknown;
  viewPage(deps: Deps, docs: readonly D[]): Promise<unknown[]>;
} {
  return {
    view: (deps, doc) => view(doc, lookups(deps)),
    viewPage: (deps, docs) => {
      const shared = lookups(deps);
      return mapBounded(docs, VIEW_CONCURRENCY, async (doc) => await view(doc, shared));
    },
  };
}
