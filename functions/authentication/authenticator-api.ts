import { X509Certificate } from 'node:crypto';
import * as z from 'zod';
import { hashAllowedPassword } from '#shared/auth/password-policy.ts';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import { type Authenticator, authenticators } from '#shared/entities/authenticator.ts';
import { identities } from '#shared/entities/identity.ts';
import { ApiError, invalidField } from '#shared/errors/api-error.ts';
import { isClientLeaf, isSignedByCa } from '#shared/pki/ca-trust.ts';
import { chainsTo, fingerprintOf, firstCertificateOf } from '#shared/pki/certificates.ts';
import { networkCa } from '#shared/pki/network-ca.ts';
import { allCas } from '#shared/pki/trusted-cas.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { idField, tagsField } from '#shared/schemas/common-fields.ts';
import { passwordField, usernameField } from '#shared/schemas/credential-fields.ts';
import { authenticatorView } from '#shared/views/authenticator-view.ts';

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

type AuthenticatorCreate = z.infer<typeof createSchema>;
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

/**
 * A cert authenticator an admin registers from a certificate: it must chain to the network's signing CA (then it is
 * extendable like an enrolled one) or to a verified third-party CA (then it goes with that CA).
 */
async function certificateAuthenticator(deps: Deps, certPem: string) {
  const certificate = firstCertificateOf(certPem);
  if (!certificate) throw invalidField('certPem', 'must be a PEM certificate', certPem.slice(0, 64));
  if (!isClientLeaf(certificate)) {
    throw invalidField(
      'certPem',
      'must be a client certificate (not a CA; digitalSignature, clientAuth)',
      certPem.slice(0, 64),
    );
  }
  const fields = {
    method: 'cert' as const,
    certPem: certificate.toString(),
    fingerprint: fingerprintOf(certificate),
    certIssuedAt: new Date(certificate.validFrom).toISOString(),
  };
  const network = await networkCa(deps);
  if (chainsTo(certificate, [new X509Certificate(network.signingCertPem)])) {
    return { ...fields, isIssuedByNetwork: true };
  }
  const ca = (await allCas(deps)).find((candidate) => candidate.isVerified && isSignedByCa(certificate, candidate));
  if (!ca) throw new ApiError('CERTIFICATE_FAILED_VALIDATION');
  return { ...fields, isIssuedByNetwork: false, caId: ca.id };
}

/** An authenticator as the API shows it, with its identity's name. */
export async function viewAuthenticator(deps: Deps, authenticator: Authenticator) {
  const identity = await deps.store.get(identities, authenticator.identityId);
  return authenticatorView(authenticator, identity?.doc.name ?? '');
}

/**
 * Authenticators as admins manage them (`/authenticators`). Usernames are unique (the kit's marker), the identity
 * must exist (the kit's reference check), and an identity holds one authenticator of each method (the kit's unique
 * key), all checked in the write's own transaction.
 */
export const authenticatorApi: EntityApi<Authenticator, AuthenticatorCreate, CredentialsReplace, CredentialsPatch> = {
  def: authenticators,
  createSchema,
  replaceSchema: credentialsReplaceSchema,
  patchSchema: credentialsPatchSchema,
  create: async (input, context) => {
    const { id, now } = context;
    if (input.method === 'cert') {
      const base = { id, createdAt: now, updatedAt: now, tags: input.tags ?? {}, identityId: input.identityId };
      return { doc: { ...base, ...(await certificateAuthenticator(context.deps, input.certPem ?? '')) } };
    }
    const doc: Authenticator = {
      id,
      createdAt: now,
      updatedAt: now,
      tags: input.tags ?? {},
      identityId: input.identityId,
      method: 'updb',
      username: input.username!,
      passwordHash: await hashAllowedPassword(context.deps, input.identityId, input.password!),
    };
    return { doc };
  },
  replace: (before, input, context) => replaceCredentials(context.deps, before, input),
  patch: (before, input, sent, context) => patchCredentials(context.deps, before, input, sent),
  view: viewAuthenticator,
};
