import type { z } from 'zod';
import type { ApiError } from '../http/api-error.ts';
import type { FilterableFields } from '../query/filterable-fields.ts';

/** Tag values are limited to strings, booleans and null. */
export type Tags = Record<string, string | boolean | null>;

/** The fields every stored resource has. */
export interface BaseDocument {
  id: string;
  createdAt: string;
  updatedAt: string;
  tags: Tags;
}

/** A field holding the id of another entity. */
export interface Reference<D> {
  readonly field: keyof D & string;
  /** The collection the id points into. */
  readonly collection: string;
  /**
   * Kept as a link item under the target, so the target refuses deletion (409) while anything points at it. Untracked
   * references are only checked to exist when written (targets that can never be deleted, such as identity types).
   */
  readonly tracked: boolean;
}

/**
 * A uniqueness rule over a value computed from the document (e.g. one authenticator per identity and method), kept
 * with a marker item like the unique fields.
 */
export interface UniqueKey<D> {
  /** The marker's name: `UNIQUE#<collection>#<name>` / `<value>`. */
  readonly name: string;
  /** The value that must be unique; undefined when the rule does not apply to this document. */
  readonly valueOf: (doc: D) => string | undefined;
  /** The error when another entity already holds the value. */
  readonly conflict: (value: string) => ApiError;
}

/**
 * An entity type, declared once and read by the generic store, the generic handlers, the list machinery and the
 * integrity scan.
 */
export interface EntityDefinition<D extends BaseDocument = BaseDocument> {
  /** The URL collection (`identities`); also the key prefix and the `entity` of an EntityRef. */
  readonly collection: string;
  /** The singular name used in messages (`identity`). */
  readonly label: string;
  /** The stored document; every read is parsed with it. */
  readonly schema: z.ZodType<D>;
  /** Fields whose values are unique across the type; kept with marker items in the same transaction. */
  readonly unique: readonly (keyof D & string)[];
  /**
   * Unique fields every entity has (e.g. `name`), whose markers lists read to serve `sort=<field>` in order without
   * reading the whole type.
   */
  readonly sortedBy?: readonly (keyof D & string)[];
  /** Uniqueness over computed values, beyond single fields. */
  readonly uniqueKeys?: readonly UniqueKey<D>[];
  /** Fields holding ids of other entities; checked in the same transaction that writes them. */
  readonly references?: readonly Reference<D>[];
  /** The parent that lists this entity as a child (GSI2), e.g. the identity of an authenticator. */
  readonly parentOf?: (doc: D) => { readonly collection: string; readonly id: string } | undefined;
  /** What a list's filter and sort may name (also `meta.filterableFields`). */
  readonly filterable: FilterableFields;
  /**
   * False for types not stored under the kit's `<collection>#<id>` key (API sessions, keyed by their token's hash):
   * lists must then read the type rather than the entities a filter pins by id.
   */
  readonly readsById?: boolean;
  /** The role-attribute field that a list's `roleFilter` matches, for types policies select by role. */
  readonly roleAttributesField?: keyof D & string;
}

/** The fields every entity offers to filters and sorts. */
export const BASE_FILTERABLE: FilterableFields = {
  id: 'string',
  createdAt: 'datetime',
  updatedAt: 'datetime',
  tags: 'map',
};
