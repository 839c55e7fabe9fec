import { hashPassword } from './auth/password-hash.ts';
import { type AuthPolicy, authPolicies, DEFAULT_AUTH_POLICY_ID } from './entities/auth-policy.ts';
import { authenticators } from './entities/authenticator.ts';
import { BUILTIN_CONFIG_TYPES } from './entities/builtin-config-types.ts';
import { configTypes } from './entities/config-type.ts';
import { identities, newIdentity } from './entities/identity.ts';
import { identityTypes, SEEDED_IDENTITY_TYPES } from './entities/identity-type.ts';
import { postureCheckTypes, SEEDED_POSTURE_CHECK_TYPES } from './entities/posture-check-types.ts';
import { ApiError } from './errors/api-error.ts';
import { newId } from './ids.ts';
import { ensureNetworkCa } from './pki/network-ca.ts';
import type { Deps } from './ports/deps.ts';
import { createSystemItemOp } from './store/system-items.ts';
import type { WriteOp } from './store/write-op.ts';

export interface BootstrapOptions {
  readonly adminUsername: string;
  readonly adminPassword: string;
}

export interface BootstrapResult {
  /** False when the default admin already existed: its credentials were left alone. */
  readonly adminCreated: boolean;
  readonly adminIdentityId: string | undefined;
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
 * Seeds what every controller starts with: the identity types, the `default` auth policy and the default admin with
 * a username/password authenticator, and the network CA (built through the root and signing CA keys on the first run,
 * kept after). Safe to run on every start and every deploy.
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
    return { adminCreated: true, adminIdentityId: admin.id };
  } catch (error) {
    if (error instanceof AlreadyDone) return { adminCreated: false, adminIdentityId: undefined };
    throw error;
  }
}
