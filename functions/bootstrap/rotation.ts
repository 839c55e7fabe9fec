import { randomBytes } from 'node:crypto';
import { isDefaultAdminPassword, setDefaultAdminPassword } from '#shared/bootstrap.ts';
import type { Deps } from '#shared/ports/deps.ts';

/** One step of a Secrets Manager rotation, as Secrets Manager invokes the rotation function with it. */
export interface RotationEvent {
  readonly Step: 'createSecret' | 'setSecret' | 'testSecret' | 'finishSecret';
  readonly SecretId: string;
  readonly ClientRequestToken: string;
}

/** What the rotation needs of Secrets Manager (`secrets-manager-versions.ts` is the AWS one). */
export interface SecretVersions {
  /** Each version of the secret with its staging labels, and whether rotation is on. */
  stages(secretId: string): Promise<{ readonly rotationEnabled: boolean; readonly versions: Record<string, string[]> }>;
  /** The value of a version (by id and label); undefined if there is none. */
  value(secretId: string, versionId: string, stage: string): Promise<string | undefined>;
  /** Writes a new version with the given id, labelled AWSPENDING. */
  putPending(secretId: string, versionId: string, value: string): Promise<void>;
  /** Moves AWSCURRENT to `versionId` from `fromVersionId`. */
  makeCurrent(secretId: string, versionId: string, fromVersionId: string | undefined): Promise<void>;
}

export function isRotationEvent(event: unknown): event is RotationEvent {
  const candidate = event as Partial<RotationEvent> | undefined;
  return typeof candidate?.Step === 'string' && typeof candidate.SecretId === 'string';
}

/** 32 characters from 24 random bytes (192 bits), URL-safe base64: nothing a shell, JSON or a form would mangle. */
export function newAdminPassword(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * Rotates the default admin's password, one Secrets Manager step per call: `createSecret` writes a new password as
 * the pending version, `setSecret` makes it the admin's (the old one no longer logs in), `testSecret` checks the admin
 * logs in with it, `finishSecret` makes it the current version. Each step is idempotent, as Secrets Manager may repeat
 * one. Only the secret the stack made for the admin is rotated: any other secret is refused, so a rotation set up
 * elsewhere with this function cannot reach the admin.
 */
export async function rotateAdminPassword(
  event: RotationEvent,
  options: {
    readonly deps: Deps;
    readonly secrets: SecretVersions;
    readonly adminSecretArn: string;
    readonly newPassword?: () => string;
  },
): Promise<void> {
  const { deps, secrets, adminSecretArn } = options;
  const { Step: step, SecretId: secretId, ClientRequestToken: token } = event;
  if (secretId !== adminSecretArn)
    throw new Error(`this function rotates only the admin password secret, not ${secretId}`);
  const { rotationEnabled, versions } = await secrets.stages(secretId);
  if (!rotationEnabled) throw new Error(`rotation is not enabled on ${secretId}`);
  const stages = versions[token];
  if (!stages) throw new Error(`version ${token} of the admin password secret has no stage to rotate`);
  if (stages.includes('AWSCURRENT')) return;
  if (!stages.includes('AWSPENDING')) throw new Error(`version ${token} of the admin password secret is not pending`);

  const pending = async () => {
    const value = await secrets.value(secretId, token, 'AWSPENDING');
    if (!value) throw new Error(`the pending version ${token} of the admin password secret has no value`);
    return value;
  };
  switch (step) {
    case 'createSecret':
      if ((await secrets.value(secretId, token, 'AWSPENDING')) === undefined) {
        await secrets.putPending(secretId, token, (options.newPassword ?? newAdminPassword)());
      }
      return;
    case 'setSecret':
      await setDefaultAdminPassword(deps, await pending());
      deps.logger.info('default admin password rotated', { secretVersion: token });
      return;
    case 'testSecret':
      if (!(await isDefaultAdminPassword(deps, await pending()))) {
        throw new Error('the default admin does not log in with the pending password');
      }
      return;
    case 'finishSecret': {
      const current = Object.entries(versions).find(([, labels]) => labels.includes('AWSCURRENT'))?.[0];
      await secrets.makeCurrent(secretId, token, current);
      return;
    }
    default:
      throw new Error(`unknown rotation step ${String(step)}`);
  }
}
