import * as z from 'zod';
import { ApiError } from '../errors/api-error.ts';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';

export const ENROLLMENT_METHODS = ['ott', 'ottca', 'updb'] as const;

/**
 * An outstanding enrollment. Its token is kept as issued (not hashed): admins must be able to read it back, in the
 * identity detail and the enrollment JWT, until the identity enrolls; it is single-use and expires.
 */
export const enrollmentSchema = z.object({
  ...baseDocumentShape,
  identityId: z.string(),
  method: z.enum(ENROLLMENT_METHODS),
  token: z.string(),
  expiresAt: z.string(),
  caId: z.string().nullable(),
  username: z.string().nullable(),
  /** The enrollment JWT, signed once when the enrollment is made (views never sign); absent on enrollments made before. */
  jwt: z.string().optional(),
});
export type Enrollment = z.infer<typeof enrollmentSchema>;

export const enrollments: EntityDefinition<Enrollment> = {
  collection: 'enrollments',
  label: 'enrollment',
  schema: enrollmentSchema,
  unique: ['token'],
  references: [
    { field: 'identityId', collection: 'identities', onTargetDelete: 'cascade' },
    // Deleting a CA ends the ottca enrollments that name it.
    { field: 'caId', collection: 'cas', onTargetDelete: 'cascade' },
  ],
  // An identity has at most one outstanding enrollment of each method.
  uniqueKeys: [
    {
      name: 'identityMethod',
      valueOf: (doc) => `${doc.identityId}/${doc.method}`,
      conflict: (value) =>
        new ApiError('ENROLLMENT_EXISTS', {
          message: `The identity already has an outstanding ${value.split('/')[1]} enrollment.`,
          cause: { field: 'method', reason: 'an enrollment of this method is outstanding', value: value.split('/')[1] },
        }),
    },
  ],
  parentOf: (doc) => ({ collection: 'identities', id: doc.identityId }),
  filterable: {
    ...BASE_FILTERABLE,
    identityId: 'string',
    method: 'string',
    expiresAt: 'datetime',
    caId: 'string',
    username: 'string',
  },
};

/** How long an identity enrollment stays valid when nobody says otherwise (the reference's default, 180 minutes). */
export const DEFAULT_ENROLLMENT_MINUTES = 180;
