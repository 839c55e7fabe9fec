import type { z } from 'zod';
import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import type { OperationRequest } from '../http/operation.ts';
import type { Deps } from '../ports/deps.ts';
import type { Stored } from '../store/entity-store.ts';
import type { NamedEntity } from '../store/policies-naming.ts';
import type { WriteOp } from '../store/write-op.ts';

/** What a create, replace or patch can see besides its body. */
export interface WriteContext {
  readonly deps: Deps;
  readonly request: OperationRequest;
  /** The write's timestamp, ISO-8601. */
  readonly now: string;
}

/** A new document and the writes that must commit with it (children such as enrollments). */
export interface NewEntity<D> {
  readonly doc: D;
  readonly ops?: readonly WriteOp[];
}

/**
 * How one entity type is served over HTTP: its request schemas, how a request becomes a document, and how a document
 * is shown. Read-only types (identity types) leave out the write parts. The generic operations in `crud-operations.ts` do the rest (404s, uniqueness, references, concurrency,
 * lists, envelopes).
 */
export interface EntityApi<D extends BaseDocument, C, R, P> {
  readonly def: EntityDefinition<D>;
  readonly createSchema?: z.ZodType<C>;
  readonly replaceSchema?: z.ZodType<R>;
  readonly patchSchema?: z.ZodType<P>;
  /** Whether the list takes `roleFilter` / `roleSemantic`. */
  readonly roleFilter?: boolean;
  create?(input: C, context: WriteContext & { readonly id: string }): Promise<NewEntity<D>> | NewEntity<D>;
  replace?(before: D, input: R, context: WriteContext): Promise<D> | D;
  /** `sent` holds the top-level keys the body had: only those change. */
  patch?(before: D, input: P, sent: ReadonlySet<string>, context: WriteContext): Promise<D> | D;
  /** Checks and writes committed with a replace or patch (e.g. that ids named in a list still exist). */
  updateOps?(doc: D, context: WriteContext): readonly WriteOp[];
  view(deps: Deps, doc: D): Promise<unknown> | unknown;
  /** A list page's views at once, when they can share reads (e.g. the names of referenced entities). */
  viewPage?(deps: Deps, docs: readonly D[]): Promise<unknown[]>;
  /** Refuses an update or delete the caller may not make (e.g. of the default admin). */
  guard?(stored: D, action: 'replace' | 'patch' | 'delete', context: WriteContext): void;
  /**
   * Writes committed with the entity's deletion beyond its `cascade` children (which the kit finds by their links),
   * within `room` transaction items.
   */
  deleteOps?(deps: Deps, stored: Stored<D>, room: number): Promise<readonly WriteOp[]>;
  /**
   * Its `cascade` children may be more than one transaction holds (a CA's authenticators): a delete removes them in
   * transactions of their own first (`deleteEntity`'s drain).
   */
  readonly manyChildren?: boolean;
  /**
   * Other entities `deleteOps` deletes with this one (a tunneling router's identity): policies naming them by `@id`
   * lose those roles in the same delete, as they lose this entity's.
   */
  namedWith?(doc: D): readonly NamedEntity[];
}
