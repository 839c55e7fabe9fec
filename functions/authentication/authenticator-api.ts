import * as z from 'zod';
import { hashAllowedPassword } from '#shared/auth/password-policy.ts';
import { entityApi } from '#shared/crud/entity-api.ts';
import { viewsSharing } from '#shared/crud/page-views.ts';
import { type Authenticator, authenticators } from '#shared/entities/authenticator.ts';
import { identities } from '#shared/entities/identity.ts';
import { registeredCertificate } from '#shared/pki/registered-certificate.ts';
import { idField, tagsField } from '#shared/schemas/common-fields.ts';
import { passwordField, usernameField } from '#shared/schemas/credential-fields.ts';
import { authenticatorView } from '#shared/views/authenticator-view.ts';
import { nameLookup } from '#shared/views/name-lookup.ts';
import {
  credentialsPatchSchema,
  credentialsReplaceSchema,
  patchCredentials,
  replaceCredentials,
} from './authenticator-credentials.ts';

const createSchema = z
  .object({
    identityId: idField,
    method: z.enum(['updb', 'cert']),
    username: usernameField.optional(),
    password: passwordField.optional(),
    certPem: z
      .string()
      .max(64 * 1024)
      .nullable()
      .optional(),
    tags: tagsField.optional(),
  })
  .superRefine((input, context) => {
    const missing = (path: string, message: string) => context.addIssue({ code: 'custom', path: [path], message });
    if (input.method === 'updb') {
      if (!input.username) missing('username', "method 'updb' needs a username");
      if (!input.password) missing('password', "method 'updb' needs a password");
      if (input.certPem) missing('certPem', "certPem applies only to method 'cert'");
    } else if (!input.certPem) {
      missing('certPem', "method 'cert' needs certPem");
    }
  });

/**
 * Authenticators as admins manage them (`/authenticators`). Usernames are unique (the kit's marker), the identity
 * must exist (the kit's reference check), and an identity holds one authenticator of each method (the kit's unique
 * key), all checked in the write's own transaction.
 */
export const authenticatorApi = entityApi({
  def: authenticators,
  createSchema,
  replaceSchema: credentialsReplaceSchema,
  patchSchema: credentialsPatchSchema,
  create: async ({ identityId, method, username, password, certPem }, { deps }) => ({
    doc:
      method === 'cert'
        ? { identityId, ...(await registeredCertificate(deps, certPem ?? '')) }
        : {
            identityId,
            method,
            username: username!,
            passwordHash: await hashAllowedPassword(deps, identityId, password!),
          },
  }),
  replace: (before, input, { deps }) => replaceCredentials(deps, before, input),
  patch: (before, input, sent, { deps }) => patchCredentials(deps, before, input, sent),
  // The sessions it opened end with it (`isRevoked`: its identity no longer names it), from the commit on; its `ended`
  // notice has the routers drop them.
  ...viewsSharing(
    (deps) => nameLookup(deps, identities),
    async (doc: Authenticator, identityName) => authenticatorView(doc, await identityName(doc.identityId)),
  ),
});
