import * as z from 'zod';
import { PRECEDENCES } from '../entities/identity.ts';
import { mapOf, tagValue } from './map-field.ts';

/** Request-side field schemas shared by every entity type. */
export const tagsField = mapOf(tagValue).nullable();

/** `roleAttributes` of identities, services, edge routers: plain names, never `#role` or `@id` expressions. */
export const roleAttributesField = z
  .array(
    z
      .string()
      .min(1)
      .max(255)
      .refine((value) => !value.startsWith('#') && !value.startsWith('@'), {
        message: 'role attributes may not start with # or @ (those mark roles in policies)',
      }),
  )
  // Each attribute is an index item written with the entity; 32 keeps any change within one transaction.
  .max(32)
  .nullable();

export const costField = z.number().int().min(0).max(65535);
export const precedenceField = z.enum(PRECEDENCES);
export const nameField = z.string().trim().min(1).max(255);
/** The id of another entity: ids are short, so anything longer names nothing and is refused as input. */
export const idField = z.string().min(1).max(255);
