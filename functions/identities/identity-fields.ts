import * as z from 'zod';
import { costField, idField, precedenceField, roleAttributesField, tagsField } from '#shared/schemas/common-fields.ts';
import { appDataSchema, mapOf } from '#shared/schemas/map-field.ts';

/** The API's identity types; User, Device and Service are kept as `Default`, as the reference does. */
export const identityTypeField = z.enum(['User', 'Device', 'Service', 'Router', 'Default']);

/** The fields a create, replace and patch body may hold besides the name, type and admin flag. */
export const IDENTITY_FIELDS = {
  // A blank policy is the default one (`identity-api.ts`), as the reference keeps it: the admin console's policy list
  // starts with an empty choice.
  authPolicyId: z.string().max(255).nullable().optional(),
  // Unique values are sort keys of their marker partition (at most 1,024 bytes): 255 characters always fit. A blank
  // one is no external id at all (stored as null, with no uniqueness marker), as the reference keeps it: the admin
  // console sends `""` whenever the field is left empty.
  externalId: z
    .string()
    .max(255)
    .nullable()
    .optional()
    .transform((value) => (value === undefined ? undefined : value?.trim() ? value : null)),
  roleAttributes: roleAttributesField.optional(),
  appData: appDataSchema.nullable().optional(),
  // A cleared number box sends null: cost 0, as the reference reads it.
  defaultHostingCost: costField.nullable().optional(),
  defaultHostingPrecedence: precedenceField.optional(),
  serviceHostingCosts: mapOf(costField).nullable().optional(),
  serviceHostingPrecedences: mapOf(precedenceField).nullable().optional(),
  tags: tagsField.optional(),
  // Fine-grained permissions are a BETA feature of the reference that this controller does not implement: accept
  // none rather than silently dropping what a caller meant to grant.
  permissions: z
    .array(z.string())
    .max(0, { message: 'permissions are not supported; use isAdmin' })
    .nullable()
    .optional(),
};

/** The outstanding enrollments a create may ask for: `ott`, `ottca` (a CA id) and/or `updb` (a username). */
export const enrollmentRequestField = z
  .object({
    ott: z.boolean().optional(),
    ottca: idField.optional(),
    updb: z.string().min(4).max(100).optional(),
  })
  .nullable()
  .optional();
