import type { z } from 'zod';
import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import type { OperationRequest } from '../http/operation.ts';
import type { Deps } from '../ports/deps.ts';
import type { Stored } from '../store/entity-store.ts';
import type { NamedEntity } from '../store/policies-naming.ts';
import type { WriteOp } from '../store/write-op.ts';
import type { Variants } from './variants.ts';

/** What a create, replace or patch can see besides its body. */
export interface WriteContext {
  readonly deps: Deps;
  readonly request: OperationRequest;
  /** The write's timestamp, ISO-8601. */
  readonly now: string;
}

/** What an update's own writes can see: besides the context, how many transaction items the entity's write left. */
export interface UpdateContext extends WriteContext {
  readonly room: number;
}

/**
 * A document without the fields the kit sets itself: `id`, `createdAt`, `updatedAt`, and `tags` (taken from the
 * body). Over each member of a union, so a discriminated type keeps its members' own fields.
 */
export type Fields<D> = D extends unknown ? Omit<D, keyof BaseDocument> : never;

/** A new document's fields and the writes that must commit with it (children such as enrollments). */
export interface NewEntity<D> {
  readonly doc: Fields<D>;
  readonly ops?: readonly WriteOp[];
}

/**
 * How one entity type is served over HTTP: its request schemas, how a body becomes a document, and how a document is
 * shown. The generic operations in `crud-operations.ts` do the rest (404s, uniqueness, references, concurrency,
 * lists, envelopes), and the kit's defaults spare each type what every type does alike:
 *
 * - the kit sets `id`, `createdAt` and `updatedAt`, and `tags` from the body (absent or null: none; a patch keeps
 *   them unless it sends them), so `create`, `replace` and `patch` map only the type's own fields;
 * - a PATCH body is the replace body with every field optional (`patchSchema` when it differs);
 * - a PATCH is the replace of the stored document (as `asInput` shows it) with the sent keys over it (`patch` when
 *   it differs).
 *
 * Read-only types (identity types) leave out the write parts.
 */
export interface EntityApi<D extends BaseDocument, C, R, P> {
  readonly def: EntityDefinition<D>;
  readonly createSchema?: z.ZodType<C>;
  readonly replaceSchema?: z.ZodType<R>;
  /** Only where a PATCH body is not the replace body made optional (by default it is; see `keptOnNull`). */
  readonly patchSchema?: z.ZodType<P>;
  /**
   * Fields a PATCH may send as null to leave them as they are, as the reference reads a null there. A type that has
   * them takes null for every field of a PATCH: the others then get their zero value, as a PUT leaving them out does.
   */
  readonly keptOnNull?: readonly (keyof R & string)[];
  /**
   * Its body nests objects a PATCH changes field by field, down to single flags (an auth policy's `primary.updb`): the
   * kit's PATCH body and merge then go into every nested object, and a nested object sent as null changes nothing.
   * Not for free-form maps, which a PATCH replaces whole.
   */
  readonly nestedPatch?: boolean;
  /** The variants of a discriminated type, whose fields the kit checks before `create` and `replace` see a body. */
  readonly variants?: Variants;
  /** Whether the list takes `roleFilter` / `roleSemantic`. */
  readonly roleFilter?: boolean;
  create?(input: C, context: WriteContext & { readonly id: string }): Promise<NewEntity<D>> | NewEntity<D>;
  /** The fields a replace body sets, absent optional ones at their zero values; the rest of the document stays. */
  replace?(before: D, input: R, context: WriteContext): Promise<Partial<D>> | Partial<D>;
  /** A patch of the type's own, only where it is not the kit's replace of the merged body; `sent`: the body's keys. */
  patch?(before: D, input: P, sent: ReadonlySet<string>, context: WriteContext): Promise<Partial<D>> | Partial<D>;
  /** A stored document as the replace body that would produce it, where their fields differ (by default it is one). */
  asInput?(doc: D): R;
  /**
   * Checks and writes committed with a replace or patch, from the document before and after (e.g. that the name is
   * free among another type's, or the other entities a change of a field creates or deletes).
   */
  updateOps?(before: D, after: D, context: UpdateContext): Promise<readonly WriteOp[]> | readonly WriteOp[];
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
  /** What follows a committed delete outside the table (a deleted CA leaves the mTLS truststore). */
  afterDelete?(deps: Deps, deleted: D): Promise<void>;
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

/** An entity type's API, its body types read from its schemas (so a file need not name them). */
export function entityApi<D extends BaseDocument, C = never, R = never, P = never>(
  api: EntityApi<D, C, R, P>,
): EntityApi<D, C, R, P> {
  return api;
}
