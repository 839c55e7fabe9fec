import type { z } from 'zod';
import type { ApiError } from '../errors/api-error.ts';
import type { FilterableFields } from '../query/filterable-fields.ts';
import type { RouterNotice } from './router-notice.ts';

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
 * What deleting the target of a reference does while an entity still points at it.
 * - `refuse`: the delete answers 409 `CAN_NOT_DELETE_REFERENCED_ENTITY` (an identity's auth policy).
 * - `cascade`: the referring entity is a child and goes with its parent (an identity's authenticators).
 * - `none`: the target can never be deleted (identity types), so it is only checked to exist when written.
 */
export type OnTargetDelete = 'refuse' | 'cascade' | 'none';

/**
 * Where a reference's ids are held: a top-level field (`authPolicyId`) or a dotted path through nested objects
 * (`primary.extJwt.allowedSigners`). The path is also the link item's last key part and the `field` of the 400 for a
 * missing target, so its parts never contain `#` or `.`.
 */
export type ReferenceField<D> = (keyof D & string) | `${keyof D & string}.${string}`;

/**
 * A field holding the id (or a list of ids) of other entities: the kit's one mechanism for every link between
 * entities. How it holds under concurrency, so no write ever leaves a dangling id or an orphan:
 *
 * 1. Writing a reference checks, inside the writing transaction, that the target exists and is not being deleted
 *    (`deletingUntil` unset or past), and for `refuse`/`cascade` puts a link item `REFBY#<collection>#<id>#<field>`
 *    in the target's partition.
 * 2. Deleting an entity (`delete-entity.ts`) first marks it `deletingUntil` (a version-checked update), so any
 *    transaction that would add a link from then on fails its check; then it reads its links strongly consistently
 *    (same partition), answers 409 for a `refuse` link (and clears the mark), or deletes `cascade` children in its own
 *    final transaction, which is conditioned on the marked version. A writer that committed before the mark has its
 *    link read; one that comes after fails. A mark left by a crashed delete expires by itself.
 * 3. Every write counts its items before sending them: a change past DynamoDB's 100-item transaction is a 400.
 */
export interface Reference<D> {
  /**
   * A string field, or an array of ids (each id one link; repeated ids count once), at the top level or at a dotted
   * path (see `ReferenceField`; a missing or null object along the path holds no ids).
   */
  readonly field: ReferenceField<D>;
  /** The collection the ids point into. */
  readonly collection: string;
  readonly onTargetDelete: OnTargetDelete;
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
  /**
   * Fields every unique marker of the type carries beside the entity's id, so a lookup by a unique value (a login's
   * username or certificate fingerprint) learns them without reading the entity first. An update that changes them
   * rewrites the markers (they are compared like every derived item), and the integrity scan checks them; names the
   * marker itself uses (`PK`, `SK`, `entityId`) are refused (`test/unit/entity-definitions.test.ts`).
   */
  readonly markerCarries?: (doc: D) => Readonly<Record<string, string>>;
  /** Fields holding ids of other entities; see `Reference` for how the links are kept. */
  readonly references?: readonly Reference<D>[];
  /**
   * The parent under which views list this entity (GSI2), e.g. the identity of an authenticator. Its lifetime is kept
   * by a `cascade` reference, not by this index (which is eventually consistent).
   */
  readonly parentOf?: (doc: D) => { readonly collection: string; readonly id: string } | undefined;
  /**
   * A field of another entity's item that holds this entity's id while it lives (an identity's
   * `certAuthenticatorId`), so a reader of that item learns the entity still exists without reading it. Kept by the
   * kit's create (set) and delete (removed) of this type, in their own transactions, however they are reached
   * (cascades, re-enrolls, enrollments), each moving the holder's version so a replace read before cannot write an old
   * value back (`naming-field.ts`). One entity at a time may hold the field (a unique key of the type), and a holder
   * without the field says nothing: its readers read the entity instead.
   */
  readonly namedOn?: (doc: D) => NamingField | undefined;
  /**
   * The fields of this type's items that another type's `namedOn` keeps (an identity's authenticators), each with the
   * type it names: the integrity scan checks that what they name exists.
   */
  readonly namesLive?: readonly { readonly field: keyof D & string; readonly collection: string }[];
  /** What a list's filter and sort may name (also `meta.filterableFields`). */
  readonly filterable: FilterableFields;
  /**
   * False for types not stored under the kit's `<collection>#<id>` key (API sessions, keyed by their token's hash):
   * lists must then read the type rather than the entities a filter pins by id.
   */
  readonly readsById?: boolean;
  /**
   * True for a type some operation reads whole (`readAll`: every posture check for a session's policies, every config
   * type for a client that asks for all): only its documents enter the type index (GSI1), whose copies cost a write
   * unit per KB on every create, update and delete and whose one partition per type takes every write of it. Keep it
   * to small types admins write; lists never need it (they read filter records).
   */
  readonly readWhole?: boolean;
  /** The role-attribute field that a list's `roleFilter` matches, for types policies select by role. */
  readonly roleAttributesField?: keyof D & string;
  /**
   * Fields kept on the entity's id-order item besides its filter record, for a reader that needs them for many
   * entities of the type at once without reading each (a session's edge routers, from one query of the routers'
   * id-order partition: `appData`).
   */
  readonly idOrderFields?: readonly (keyof D & string)[];
  /** For policies: the role fields that select entities of other types (see `Selections`). */
  readonly selects?: Selections<D>;
  /**
   * Change markers every create, replace and delete of this type moves in its own transaction: what readers poll to
   * learn that something they derive from these entities may have changed (the client's `lastChangeAt` of its
   * services). Fixed, or derived from the document (a replace moves those of both versions). Where each is stored (an
   * identity's own on its item) is `shared/store/change-markers.ts`'s.
   */
  readonly changeMarkers?: readonly string[] | ((doc: D) => readonly string[]);
  /**
   * What a create (no `before`), replace or delete (no `after`) of this type tells the routers' control channel
   * endpoints (`RouterNotice`: which identities may use which router, an identity's certificate, a router ended),
   * recorded in the write's own transaction (`shared/store/ctrl-changes.ts`), so no path of the kit misses it.
   */
  readonly routerNotices?: (before: D | undefined, after: D | undefined) => readonly RouterNotice[];
}

/** Where an entity's id is held while it lives (`EntityDefinition.namedOn`): a field of another entity's item. */
export interface NamingField {
  readonly collection: string;
  readonly id: string;
  readonly field: string;
}

/** A role field of a policy (`identityRoles`) and the type its `#attribute` and `@id` roles select (`identities`). */
export interface Selector<D> {
  readonly field: keyof D & string;
  readonly collection: string;
  /** The entity type's label in the plural, for "no identities found with the given ids". */
  readonly plural: string;
}

/**
 * How a policy selects entities, and how readers find the policies that select an entity without reading every
 * policy. For each distinct role of each selector field the kit keeps a selection item
 * `SELECT#<collection>#<role>` / `<policy collection>#<policy id>` (roles are `#attribute`, `@id` or `#all`), written
 * in the policy's own transaction. Every selection item carries the policy's whole evaluation record (`recordOf`:
 * semantic, type, every role field), so a reader that found an entity's policies (one query per `@id`, `#all` and
 * attribute of the entity, in parallel) evaluates them without reading the policies. A change of the record rewrites
 * all of the policy's selection items; a change of anything else (name, tags) writes none. `@id` roles are checked
 * to exist when written, like references with `onTargetDelete: 'none'`.
 */
export interface Selections<D> {
  readonly fields: readonly Selector<D>[];
  readonly recordOf: (doc: D) => Readonly<Record<string, unknown>>;
  /**
   * The record's fields but the id, in the order a selection item lists their values (a JSON array: the item is read
   * once per policy selecting an entity, so it carries no field names).
   */
  readonly recordFields: readonly string[];
}

/** The fields every entity offers to filters and sorts. */
export const BASE_FILTERABLE: FilterableFields = {
  id: 'string',
  createdAt: 'datetime',
  updatedAt: 'datetime',
  tags: 'map',
};
