import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RotationEvent, rotateAdminPassword, type SecretVersions } from '#functions/bootstrap/rotation.ts';
import { asTableUser } from '../support/table-grants.ts';
import {
  ADMIN_PASSWORD,
  ADMIN_USERNAME,
  startTestController,
  type TestController,
} from '../support/test-controller.ts';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:AdminPassword-AbCdEf';

/** A secret's versions and staging labels, kept as Secrets Manager keeps them during a rotation. */
class SecretDouble implements SecretVersions {
  readonly values = new Map<string, string>();
  readonly labels = new Map<string, string[]>([['initial', ['AWSCURRENT']]]);

  constructor(current: string) {
    this.values.set('initial', current);
  }

  /** What `RotateSecret` does before the first step: a new version id labelled AWSPENDING, with no value yet. */
  beginRotation(token: string): void {
    this.labels.set(token, ['AWSPENDING']);
  }

  current(): string | undefined {
    const [version] = [...this.labels].find(([, labels]) => labels.includes('AWSCURRENT')) ?? [];
    return version === undefined ? undefined : this.values.get(version);
  }

  async stages() {
    return { rotationEnabled: true, versions: Object.fromEntries(this.labels) };
  }

  async value(_secretId: string, versionId: string, stage: string) {
    return this.labels.get(versionId)?.includes(stage) ? this.values.get(versionId) : undefined;
  }

  async putPending(_secretId: string, versionId: string, value: string) {
    this.values.set(versionId, value);
    this.labels.set(versionId, ['AWSPENDING']);
  }

  async makeCurrent(_secretId: string, versionId: string, fromVersionId: string | undefined) {
    if (fromVersionId) this.labels.set(fromVersionId, ['AWSPREVIOUS']);
    this.labels.set(versionId, ['AWSCURRENT']);
  }
}

/** A rotation step as the bootstrap function runs it, under that function's grant on the table. */
const rotateAsBootstrap: typeof rotateAdminPassword = (event, options) =>
  asTableUser('bootstrap', () => rotateAdminPassword(event, options));

const STEPS: RotationEvent['Step'][] = ['createSecret', 'setSecret', 'testSecret', 'finishSecret'];

let controller: TestController;
beforeAll(async () => {
  controller = await startTestController();
});
afterAll(() => controller.close());

async function passwordLogin(password: string): Promise<number> {
  const response = await controller.call('POST', '/edge/management/v1/authenticate?method=password', {
    body: { username: ADMIN_USERNAME, password },
  });
  return response.status;
}

describe('rotating the admin password secret', () => {
  it('writes a new password back to the secret, gives it to the admin, and the old one no longer logs in', async () => {
    const secret = new SecretDouble(ADMIN_PASSWORD);
    const token = 'rotation-1';
    secret.beginRotation(token);
    const rotate = (step: RotationEvent['Step']) =>
      rotateAsBootstrap(
        { Step: step, SecretId: SECRET_ARN, ClientRequestToken: token },
        { deps: controller.deps, secrets: secret, adminSecretArn: SECRET_ARN },
      );

    for (const step of STEPS) {
      await rotate(step);
      // Secrets Manager may repeat a step: each is idempotent.
      await rotate(step);
    }

    const rotated = secret.current();
    expect(rotated).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(rotated).not.toBe(ADMIN_PASSWORD);
    expect(secret.labels.get('initial')).toEqual(['AWSPREVIOUS']);
    expect(await passwordLogin(ADMIN_PASSWORD)).toBe(401);
    expect(await passwordLogin(rotated!)).toBe(200);
  });

  it('rotates only the admin password secret', async () => {
    const secret = new SecretDouble('anything');
    secret.beginRotation('rotation-2');
    const other = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:SomeoneElses-XyZ123';

    await expect(
      rotateAsBootstrap(
        { Step: 'createSecret', SecretId: other, ClientRequestToken: 'rotation-2' },
        { deps: controller.deps, secrets: secret, adminSecretArn: SECRET_ARN },
      ),
    ).rejects.toThrow(/rotates only the admin password secret/);
    expect(secret.values.has('rotation-2')).toBe(false);
  });

  it('fails its test step, and so never makes the password current, if the admin does not log in with it', async () => {
    const secret = new SecretDouble('whatever');
    secret.beginRotation('rotation-3');
    await secret.putPending(SECRET_ARN, 'rotation-3', 'a-password-nobody-set-on-the-admin');

    await expect(
      rotateAsBootstrap(
        { Step: 'testSecret', SecretId: SECRET_ARN, ClientRequestToken: 'rotation-3' },
        { deps: controller.deps, secrets: secret, adminSecretArn: SECRET_ARN },
      ),
    ).rejects.toThrow(/does not log in with the pending password/);
    expect(secret.current()).toBe('whatever');
  });
});
