import * as z from 'zod';
import { mapOf, tagValue } from './map-field.ts';
import { PRECEDENCES } from './precedence.ts';
import { roleAttributeProblem } from './role-attribute.ts';

/** Request-side field schemas shared by every entity type. */
export const tagsField = mapOf(tagValue).nullable();

/**
 * `roleAttributes` of identities, services, edge routers, posture checks (and a CA's `identityRoles`): plain names
 * under the one role attribute rule (`role-attribute.ts`), never `#role` or `@id` expressions; repeats kept once.
 */
export const roleAttributesField = z
  .array(
    z.string().superRefine((value, ctx) => {
      if (value.startsWith('#') || value.startsWith('@')) {
        ctx.addIssue({
          code: 'custom',
          message: 'role attributes may not start with # or @ (those mark roles in policies)',
        });
        return;
      }
      const problem = roleAttributeProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: `role attribute ${problem}` });
    }),
  )
  // Each attribute is an index item written with the entity; 32 keeps any change within one transaction.
  .max(32)
  .transform((attributes) => [...new Set(attributes)])
  .nullable();

export const costField = z.number().int().min(0).max(65535);
export const precedenceField = z.enum(PRECEDENCES);
export const nameField = z.string().trim().min(1).max(255);
/** The id of another entity: ids are short, so anything longer names nothing and is refused as input. */
export const idField = z.string().min(1).max(255);
/** When something ends: ISO-8601 with an offset. */
export const expiresAtField = z.iso.datetime({ offset: true });
