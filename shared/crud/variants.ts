import * as z from 'zod';
import { invalidField } from '../errors/api-error.ts';
import { parseWith } from '../http/validate.ts';
import { isPlainObject, objectOf } from './patch-body.ts';

type Shape = Readonly<Record<string, z.ZodType>>;

/** The fields one variant takes: those it must have (after a patch's merge) and those it may have. */
export interface Variant<F extends string> {
  readonly required?: readonly F[];
  readonly optional?: readonly F[];
}

/**
 * A type whose documents are a discriminated union (posture checks by `typeId`), declared once: every variant's own
 * fields with their request schemas (null the same as absent), and which fields each variant takes. The kit reads it
 * on every create, replace and patch alike, before the type's own mapping sees the body:
 *
 * - the discriminator is fixed at create: a replace or patch that names another is a 400 on it;
 * - a field of another variant that carries anything is a 400 naming it; a blank one (`[]`, `''`, `0`, templates of
 *   those) is ignored, as clients send every variant's fields with each (the admin console does), and so is a
 *   `sentWithAll` field whatever it holds;
 * - the variant's own fields are validated with their schemas; in a patch an object field holds just the fields it
 *   changes (merged over the stored one), and the required fields must be there once merged.
 *
 * The type's create and replace then get the body with exactly its variant's validated fields.
 */
export interface Variants<S extends Shape = Shape, K extends string = string> {
  /** The discriminator field, in bodies and documents alike. */
  readonly key: string;
  readonly fields: S;
  /** Every variant, by its discriminator value. */
  readonly of: Readonly<Record<K, Variant<keyof S & string>>>;
  readonly sentWithAll?: readonly (keyof S & string)[];
}

/** Declares a discriminated type's variants (see `Variants`). */
export function variants<S extends Shape, K extends string>(declaration: Variants<S, K>): Variants<S, K> {
  return declaration;
}

/**
 * The variant fields of a request body: taken as sent and typed as validated, because the kit validates them against
 * the variant (which it knows only once the body, or on an update the stored document, names it) before the type's
 * create or replace sees them.
 */
export function variantBodyShape<S extends Shape>(
  declaration: Variants<S, string>,
): { [F in keyof S]: z.ZodOptional<z.ZodType<z.output<S[F]>>> } {
  return Object.fromEntries(
    Object.keys(declaration.fields).map((field) => [field, z.custom<unknown>().optional()]),
  ) as unknown as { [F in keyof S]: z.ZodOptional<z.ZodType<z.output<S[F]>>> };
}

/** Whether a value carries nothing (null, `''`, `0`, `false`, or lists and objects of those). */
function isBlank(value: unknown): boolean {
  if (value === null || value === undefined || value === '' || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.every(isBlank);
  if (typeof value === 'object') return Object.values(value).every(isBlank);
  return false;
}

function ownFieldsOf(declaration: Variants, variant: string): string[] {
  const { required = [], optional = [] } = (declaration.of as Readonly<Record<string, Variant<string>>>)[variant] ?? {};
  return [...required, ...optional];
}

/**
 * A variant's own fields from a body, validated; 400 naming a field of another variant that carries anything. In a
 * patch an object field may hold some of its fields only.
 */
function checkedFields(
  declaration: Variants,
  plural: string,
  variant: string,
  body: Readonly<Record<string, unknown>>,
  patch: boolean,
): Record<string, unknown> {
  const own = ownFieldsOf(declaration, variant);
  const sent: Record<string, unknown> = {};
  for (const field of Object.keys(declaration.fields)) {
    if (!Object.hasOwn(body, field)) continue;
    const value = body[field];
    if (own.includes(field)) sent[field] = value;
    else if (!declaration.sentWithAll?.includes(field) && !isBlank(value)) {
      throw invalidField(field, `${field} is not a field of ${variant} ${plural}`, value);
    }
  }
  const shape = Object.fromEntries(
    own.map((field) => {
      const schema = declaration.fields[field]!;
      const object = patch ? objectOf(schema) : undefined;
      return [field, object ? object.partial().nullable().optional() : schema];
    }),
  );
  return parseWith(z.object(shape), sent) as Record<string, unknown>;
}

/** 400 for a field the variant requires and the (merged) fields lack. */
function requireFields(
  declaration: Variants,
  plural: string,
  variant: string,
  fields: Readonly<Record<string, unknown>>,
) {
  for (const field of (declaration.of as Readonly<Record<string, Variant<string>>>)[variant]?.required ?? []) {
    if (fields[field] === undefined || fields[field] === null) {
      throw invalidField(field, `${field} is required for ${variant} ${plural}`, null);
    }
  }
}

/** 400 on the discriminator when an update names another variant than the stored one. */
function keepVariant(declaration: Variants, label: string, stored: string, requested: unknown): void {
  if (requested !== undefined && requested !== stored) {
    throw invalidField(
      declaration.key,
      `a ${label}'s type cannot change (it is ${stored}); create a new ${label} instead`,
      requested,
    );
  }
}

/** The body without any variant's fields, and with the variant's own, once the (merged) fields have all it requires. */
function withVariantFields<B extends object>(
  declaration: Variants,
  label: string,
  variant: string,
  body: B,
  fields: Record<string, unknown>,
): B {
  requireFields(declaration, `${label}s`, variant, fields);
  const others = Object.entries(body).filter(([key]) => !Object.hasOwn(declaration.fields, key));
  return { ...Object.fromEntries(others), ...fields } as B;
}

/** The stored document's variant, which an update may name only as it is. */
function storedVariant(declaration: Variants, label: string, stored: Readonly<Record<string, unknown>>, body: object) {
  const variant = String(stored[declaration.key]);
  keepVariant(declaration, label, variant, (body as Record<string, unknown>)[declaration.key]);
  return variant;
}

/**
 * A create or replace body with its variant's fields validated: the variant the body names on a create, the stored
 * one on a replace (the body may name it, only as it is).
 */
export function checkedVariant<B extends object>(
  declaration: Variants,
  label: string,
  body: B,
  stored?: Readonly<Record<string, unknown>>,
): B {
  const sent = body as Record<string, unknown>;
  const variant = stored ? storedVariant(declaration, label, stored, sent) : String(sent[declaration.key]);
  const fields = checkedFields(declaration, `${label}s`, variant, sent, false);
  return withVariantFields(declaration, label, variant, body, fields);
}

/**
 * The replace body a patch amounts to for the variant fields: the stored ones with the sent ones over them (an object
 * field merged field by field), checked as a replace would be. `merged` is the rest of the replace body.
 */
export function patchedVariant<B extends object>(
  declaration: Variants,
  label: string,
  stored: Readonly<Record<string, unknown>>,
  sent: Readonly<Record<string, unknown>>,
  merged: B,
): B {
  const variant = storedVariant(declaration, label, stored, sent);
  const changed = checkedFields(declaration, `${label}s`, variant, sent, true);
  const fields: Record<string, unknown> = {};
  for (const field of ownFieldsOf(declaration, variant)) {
    const [before, after] = [stored[field], changed[field]];
    if (!Object.hasOwn(changed, field)) fields[field] = before;
    else if (isPlainObject(before) && isPlainObject(after)) fields[field] = { ...before, ...after };
    else fields[field] = after;
  }
  return withVariantFields(declaration, label, variant, merged, fields);
}
