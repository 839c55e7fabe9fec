import type { z } from 'zod';

/** Tag values are limited to strings, booleans and null. */
export type Tags = Record<string, string | boolean | null>;

/** The fields every stored resource has. */
export interface BaseDocument {
  id: string;
  createdAt: string;
  updatedAt: string;
  tags: Tags;
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
  /** The parent that lists this entity as a child (GSI2), e.g. the identity of an authenticator. */
  readonly parentOf?: (doc: D) => { readonly collection: string; readonly id: string } | undefined;
}
