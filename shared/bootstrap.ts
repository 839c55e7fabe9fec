import { createApiSessionOps, deleteApiSession } from './auth/api-session-store.ts';
import { hashPassword, verifyPassword } from './auth/password-hash.ts';
import { type AuthPolicy, authPolicies, DEFAULT_AUTH_POLICY_ID } from './entities/auth-policy.ts';
import { type Authenticator, authenticators } from './entities/authenticator.ts';
import { BUILTIN_CONFIG_TYPES } from './entities/builtin-config-types.ts';
import { configTypes } from './entities/config-type.ts';
import { identities, newIdentity } from './entities/identity.ts';
import { identityTypes, SEEDED_IDENTITY_TYPES } from './entities/identity-type.ts';
import { postureCheckTypes, SEEDED_POSTURE_CHECK_TYPES } from './entities/posture-check-types.ts';
import { ApiError } from './errors/api-error.ts';
import { newId } from './ids.ts';
import { ensureNetworkCa } from './pki/network-ca.ts';
import type { Deps } from './ports/deps.ts';
import { listChildren } from './store/children.ts';
import type { Stored } from './store/entity-store.ts';
import { createSystemItemOp, readSystemItem } from './store/system-items.ts';
import type { WriteOp } from './store/write-op.ts';

export interface BootstrapOptions {
  readonly adminUsername: string;
  readonly adminPassword: string;
  /**
   * When the default admin exists and logs in under another username than `adminUsername`: `keep` it (the default;
   * `npm start`), or `refuse`, failing with the reason (a deploy: the stack's setting and its `AdminUsername` output
   * must not silently disagree with who the admin is).
   */
  readonly otherAdminUsername?: 'keep' | 'refuse';
}

export interface BootstrapResult {
  /** False when the default admin already existed: its credentials were left alone. */
  readonly adminCreated: boolean;
  readonly adminIdentityId: string | undefined;
  /** The username the default admin logs in with; undefined if it has no username/password authenticator. */
  readonly adminUsername: string | undefined;
}

/** The default admin changed its username since the deploy that created it, or the deploy asks for another one. */
export class AdminUsernameMismatch extends Error {
  readonly wanted: string;
  readonly actual: string;

  constructor(wanted: string, actual: string) {
    super(
      `adminUsername is "${wanted}", but the default admin logs in as "${actual}"; the bootstrap does not rename it. ` +
        `Deploy with adminUsername "${actual}" (-c adminUsername=${actual}), or first rename the admin's ` +
        `authenticator through the API (PATCH /edge/management/v1/authenticators/<id> with {"username": "${wanted}"}) ` +
        'and deploy again.',
    );
    this.wanted = wanted;
    this.actual = actual;
    this.name = 'AdminUsernameMismatch';
  }
}

/** The marker that makes bootstrap idempotent: there is exactly one default admin, ever. */

class AlreadyDone extends ApiError {}

function base(deps: Deps, id: string) {
  const now = deps.now().toISOString();
  return { id, createdAt: now, updatedAt: now, tags: {} };
}

/** Creates an entity unless one with its id (or unique values) exists; seeds must never overwrite admin edits. */
async function seed(deps: Deps, ops: WriteOp[]): Promise<void> {
  const quiet = ops.map((op) => ({ ...op, onConditionFailed: () => new AlreadyDone('COULD_NOT_VALIDATE') }));
  try {
    await deps.store.transact(quiet);
  } catch (error) {
    if (!(error instanceof AlreadyDone)) throw error;
  }
}

export function defaultAuthPolicy(deps: Deps): AuthPolicy {
  return {
    ...base(deps, DEFAULT_AUTH_POLICY_ID),
    name: 'Default',
    primary: {
      cert: { allowed: true, allowExpiredCerts: true },
      extJwt: { allowed: true, allowedSigners: [] },
      updb: {
        allowed: true,
        lockoutDurationMinutes: 0,
        maxAttempts: 0,
        minPasswordLength: 5,
        requireMixedCase: false,
        requireNumberChar: false,
        requireSpecialChar: false,
      },
    },
    secondary: { requireExtJwtSigner: null, requireTotp: false },
  };
}

/** The writes that create each seeded posture check type, one change per type (bootstrap skips those that exist). */
function postureCheckTypeSeeds(deps: Deps): WriteOp[][] {
  const now = deps.now().toISOString();
  return SEEDED_POSTURE_CHECK_TYPES.map((type) =>
    deps.store.createOps(postureCheckTypes, { ...type, createdAt: now, updatedAt: now, tags: {} }),
  );
}

/**
 * The default admin's username/password authenticator, if the default admin was ever created and still has one. The
 * admin is found through its marker, not by username: an admin may rename it, and another identity may take the name.
 */
async function defaultAdminAuthenticator(deps: Deps): Promise<Stored<Authenticator> | undefined> {
  const marker = await readSystemItem(deps.store, 'default-admin');
  const identityId = typeof marker?.identityId === 'string' ? marker.identityId : undefined;
  if (!identityId) return undefined;
  const children = await listChildren(deps, identities.collection, identityId, authenticators.collection);
  const updb = children.find((child) => child.doc.method === 'updb');
  return typeof updb?.doc.id === 'string' ? deps.store.get(authenticators, updb.doc.id) : undefined;
}

/** Why the default admin's password cannot be set or checked: it has no username/password authenticator. */
function noAdminPassword(): Error {
  return new Error(
    'the default admin has no username/password authenticator (never created, or removed through the API): ' +
      'its password cannot be rotated',
  );
}

/**
 * Gives the default admin a new password; the old one no longer logs in. API sessions already open stay until they
 * end. The rotation of the admin password secret calls this (docs/aws-operations.md, "The admin password").
 */
export async function setDefaultAdminPassword(deps: Deps, password: string): Promise<void> {
  const stored = await defaultAdminAuthenticator(deps);
  if (!stored) throw noAdminPassword();
  const { failedAttempts: _failedAttempts, ...doc } = stored.doc;
  await deps.store.transact(
    deps.store.replaceOps(authenticators, stored, {
      ...doc,
      passwordHash: await hashPassword(password),
      updatedAt: deps.now().toISOString(),
    }),
  );
}

/** Whether `password` is the default admin's password. */
export async function isDefaultAdminPassword(deps: Deps, password: string): Promise<boolean> {
  const stored = await defaultAdminAuthenticator(deps);
  if (!stored) throw noAdminPassword();
  return stored.doc.passwordHash !== undefined && verifyPassword(password, stored.doc.passwordHash);
}

/**
 * A management-API session of the default admin, made without its password, and the way to end it: for what the
 * controller's own process does through its API (`npm start` setting up its local router), never served to anyone.
 */
export async function defaultAdminSession(deps: Deps): Promise<{ token: string; end(): Promise<void> }> {
  const stored = await defaultAdminAuthenticator(deps);
  if (!stored) throw noAdminPassword();
  const { token, session, ops } = await createApiSessionOps(deps, {
    identityId: stored.doc.identityId,
    authenticatorId: stored.doc.id,
    endsWithAuthenticator: true,
    ipAddress: '127.0.0.1',
    openedOn: 'management',
    configTypes: [],
    totpPending: false,
    extJwtPending: false,
  });
  await deps.store.transact(ops);
  return { token, end: async () => void (await deleteApiSession(deps, session)) };
}

/**
 * Seeds what every controller starts with: the identity types, the `default` auth policy, the built-in config types,
 * the posture check types, the default admin with a username/password authenticator, and the network CA (built
 * through the root and signing CA keys on the first run, kept after). Safe to run on every start and every deploy:
 * what exists is left as it is (an admin may have edited it), what a newer build adds is created.
 */
export async function bootstrap(deps: Deps, options: BootstrapOptions): Promise<BootstrapResult> {
  for (const name of SEEDED_IDENTITY_TYPES) {
    await seed(deps, deps.store.createOps(identityTypes, { ...base(deps, name), name }));
  }
  await seed(deps, deps.store.createOps(authPolicies, defaultAuthPolicy(deps)));
  await Promise.all(
    BUILTIN_CONFIG_TYPES.map(({ id, ...type }) =>
      seed(deps, deps.store.createOps(configTypes, { ...base(deps, id), ...type })),
    ),
  );
  for (const ops of postureCheckTypeSeeds(deps)) await seed(deps, ops);
  await ensureNetworkCa(deps);

  const admin = newIdentity({
    id: newId(),
    createdAt: deps.now().toISOString(),
    name: 'Default Admin',
    isAdmin: true,
    isDefaultAdmin: true,
    authPolicyId: DEFAULT_AUTH_POLICY_ID,
  });
  const marker = createSystemItemOp(
    deps.store,
    'default-admin',
    { identityId: admin.id },
    () => new AlreadyDone('COULD_NOT_VALIDATE'),
  );
  const authenticatorOps = deps.store.createOps(
    authenticators,
    {
      ...base(deps, newId()),
      identityId: admin.id,
      method: 'updb',
      username: options.adminUsername,
      passwordHash: await hashPassword(options.adminPassword),
    },
    ['identityId'],
  );
  try {
    await deps.store.transact([marker, ...deps.store.createOps(identities, admin), ...authenticatorOps]);
    return { adminCreated: true, adminIdentityId: admin.id, adminUsername: options.adminUsername };
  } catch (error) {
    if (!(error instanceof AlreadyDone)) throw error;
  }
  const existing = await defaultAdminAuthenticator(deps);
  const adminUsername = existing?.doc.username;
  if (
    options.otherAdminUsername === 'refuse' &&
    adminUsername !== undefined &&
    adminUsername !== options.adminUsername
  ) {
    throw new AdminUsernameMismatch(options.adminUsername, adminUsername);
  }
  return { adminCreated: false, adminIdentityId: existing?.doc.identityId, adminUsername };
}
