import * as z from 'zod';
import { hashAllowedPassword } from '#shared/auth/password-policy.ts';
import type { Authenticator } from '#shared/entities/authenticator.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { tagsField } from '#shared/schemas/common-fields.ts';
import { passwordField, usernameField } from '#shared/schemas/credential-fields.ts';

/** The credentials of a replace: both required (spec §2.6). */
export const credentialsReplaceSchema = z.object({
  username: usernameField,
  password: passwordField,
  tags: tagsField.optional(),
});

/** The credentials of a patch: all optional; a `null` username or password leaves it as it is. */
export const credentialsPatchSchema = z.object({
  username: usernameField.nullable().optional(),
  password: passwordField.nullable().optional(),
  tags: tagsField.optional(),
});

type CredentialsReplace = z.infer<typeof credentialsReplaceSchema>;
type CredentialsPatch = z.infer<typeof credentialsPatchSchema>;

/** 409 `CAN_NOT_UPDATE_AUTHENTICATOR` unless the authenticator has a username and password to change. */
export function requireUpdb(authenticator: Authenticator): void {
  if (authenticator.method === 'updb') return;
  throw new ApiError('CAN_NOT_UPDATE_AUTHENTICATOR', {
    message: `A ${authenticator.method} authenticator has no username or password to change.`,
    cause: { field: 'method', reason: 'only updb authenticators can be changed this way', value: authenticator.method },
  });
}

/** The authenticator with a new username and password (PUT semantics: absent tags become empty). */
export async function replaceCredentials(
  deps: Deps,
  before: Authenticator,
  input: CredentialsReplace,
): Promise<Authenticator> {
  requireUpdb(before);
  return {
    ...before,
    username: input.username,
    passwordHash: await hashAllowedPassword(deps, before.identityId, input.password),
    tags: input.tags ?? {},
  };
}

/** The authenticator with the sent fields changed; only a sent username or password needs a updb authenticator. */
export async function patchCredentials(
  deps: Deps,
  before: Authenticator,
  input: CredentialsPatch,
  sent: ReadonlySet<string>,
): Promise<Authenticator> {
  const next: Authenticator = { ...before };
  const { username, password } = input;
  if (typeof username === 'string' || typeof password === 'string') requireUpdb(before);
  if (typeof username === 'string') next.username = username;
  if (typeof password === 'string') next.passwordHash = await hashAllowedPassword(deps, before.identityId, password);
  if (sent.has('tags')) next.tags = input.tags ?? {};
  return next;
}
