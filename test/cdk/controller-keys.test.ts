import { App, type CfnElement } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { SIGNER_ROLES, type SignerRole } from '#shared/ports/signer.ts';
import {
  BOOTSTRAP_KEYS,
  KEY_ID_ENV,
  SECRET_GROUPS,
  SECRET_KEY_ENV,
  SIGNING_GROUPS,
} from '../../cdk/controller-keys.ts';
import { ControllerStack } from '../../cdk/controller-stack.ts';
import { cdkJsonContext } from './synth-context.ts';

interface CfnResource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
  readonly DeletionPolicy?: string;
}
interface Statement {
  readonly Action: string | string[];
  readonly Principal?: { AWS?: unknown };
  readonly Resource: unknown;
}
type Ref = { readonly Ref?: string; readonly 'Fn::GetAtt'?: readonly [string, string] };

const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
const stack = new ControllerStack(app, 'KeysController', { adminUsername: 'admin', apiSessionTimeoutMinutes: 30 });
const resources = (app.synth().getStackByName('KeysController').template as { Resources: Record<string, CfnResource> })
  .Resources;

const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);
/** The CA keys, which live in KMS (the server key lives in a secret). */
const CA_ROLES = SIGNER_ROLES.filter((role): role is Exclude<SignerRole, 'server'> => role !== 'server');
const keyIdOf = (role: Exclude<SignerRole, 'server'>) => logicalId(stack.controller.keys.keys[role]);
const actionsOf = (statement: Statement) => [statement.Action].flat();

/** Every function of the stack (one per group, and the bootstrap) with the role it runs as and the keys it signs with. */
function signingFunctions() {
  const groups = [...stack.controller.functions].map(([group, fn]) => ({
    name: group as string,
    functionId: logicalId(fn),
    roleId: logicalId(fn.role as never),
    keys: SIGNING_GROUPS[group] ?? [],
  }));
  const bootstrapFn = stack.controller.bootstrap.function;
  return [
    ...groups,
    {
      name: 'bootstrap',
      functionId: logicalId(bootstrapFn),
      roleId: logicalId(bootstrapFn.role as never),
      keys: BOOTSTRAP_KEYS,
    },
  ];
}

/** The roles (logical ids) a key's policy lets sign. */
function signersInKeyPolicy(role: Exclude<SignerRole, 'server'>): string[] {
  const statements = (resources[keyIdOf(role)]!.Properties.KeyPolicy as { Statement: Statement[] }).Statement;
  return statements
    .filter((statement) => actionsOf(statement).some((action) => action === 'kms:Sign' || action === 'kms:*'))
    .flatMap((statement) => [statement.Principal?.AWS].flat() as Ref[])
    .map((principal) => principal['Fn::GetAtt']?.[0] ?? JSON.stringify(principal))
    .sort();
}

describe('the PKI keys', () => {
  it('are two retained asymmetric P-256 signing keys', () => {
    for (const role of CA_ROLES) {
      const key = resources[keyIdOf(role)]!;
      expect(key.Type).toBe('AWS::KMS::Key');
      expect(key.Properties).toMatchObject({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' });
      expect(key.DeletionPolicy).toBe('Retain');
    }
  });

  it('may be used to sign only by the roles of the functions that sign with them', () => {
    const functions = signingFunctions();
    for (const role of CA_ROLES) {
      const expected = functions.filter((fn) => fn.keys.includes(role)).map((fn) => fn.roleId);
      expect(expected.length).toBeGreaterThan(0);
      expect(signersInKeyPolicy(role), role).toEqual(expected.sort());
    }
  });

  it('are named to exactly those functions, and granted in their roles only', () => {
    const kmsGrants = Object.values(resources)
      .filter((resource) => resource.Type === 'AWS::IAM::Policy')
      .flatMap((policy) =>
        (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement.filter((statement) =>
          actionsOf(statement).some((action) => action.startsWith('kms:')),
        ).flatMap((statement) =>
          ([statement.Resource].flat() as Ref[]).map((resource) => ({
            roles: (policy.Properties.Roles as Ref[]).map((ref) => ref.Ref),
            actions: actionsOf(statement).sort(),
            key: resource['Fn::GetAtt']?.[0],
          })),
        ),
      );
    for (const fn of signingFunctions()) {
      const environment = (resources[fn.functionId]!.Properties.Environment as { Variables: Record<string, Ref> })
        .Variables;
      for (const role of CA_ROLES) {
        const granted = kmsGrants.filter((grant) => grant.roles.includes(fn.roleId) && grant.key === keyIdOf(role));
        if (fn.keys.includes(role)) {
          expect(environment[KEY_ID_ENV[role]], `${fn.name} ${role}`).toEqual({ Ref: keyIdOf(role) });
          expect(granted.map((grant) => grant.actions)).toEqual([['kms:GetPublicKey', 'kms:Sign']]);
        } else {
          expect(environment[KEY_ID_ENV[role]], `${fn.name} ${role}`).toBeUndefined();
          expect(granted, `${fn.name} ${role}`).toEqual([]);
        }
      }
    }
  });
});

describe('the server key', () => {
  const secretId = stack.getLogicalId(stack.controller.keys.serverKey);
  const encryptionId = logicalId(stack.controller.keys.serverKeyEncryption);

  it('is a retained secret under a retained, rotated customer key that only signing functions decrypt, via Secrets Manager', () => {
    const secret = resources[secretId]!;
    expect(secret.Type).toBe('AWS::SecretsManager::Secret');
    expect(secret.Properties.KmsKeyId).toEqual({ 'Fn::GetAtt': [encryptionId, 'Arn'] });
    expect(secret.DeletionPolicy).toBe('Retain');
    const key = resources[encryptionId]!;
    expect(key.Properties).toMatchObject({ EnableKeyRotation: true });
    expect(key.DeletionPolicy).toBe('Retain');

    const statements = (key.Properties.KeyPolicy as { Statement: (Statement & { Condition?: unknown })[] }).Statement;
    const decrypting = statements.filter((statement) => actionsOf(statement).includes('kms:Decrypt'));
    for (const statement of decrypting) {
      expect(JSON.stringify(statement.Condition)).toContain('kms:ViaService');
    }
    // Besides the roles: the account, through Secrets Manager only, which CloudFormation needs to create the secret
    // (each principal then also needs an IAM grant of the key; see 'every key policy').
    const users = decrypting
      .filter((statement) => !isAccountRoot(statement))
      .flatMap((statement) => [statement.Principal?.AWS].flat() as Ref[])
      .map((principal) => principal['Fn::GetAtt']?.[0])
      .sort();
    const expected = signingFunctions()
      .filter((fn) => fn.keys.includes('server'))
      .map((fn) => fn.roleId)
      .sort();
    expect(expected.length).toBeGreaterThan(1);
    expect(users).toEqual(expected);
  });

  it('is named to exactly the functions that sign JWTs; only the bootstrap may write it', () => {
    const writers = Object.values(resources)
      .filter((resource) => resource.Type === 'AWS::IAM::Policy')
      .filter((policy) =>
        (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement.some((statement) =>
          actionsOf(statement).includes('secretsmanager:PutSecretValue'),
        ),
      )
      .flatMap((policy) => (policy.Properties.Roles as Ref[]).map((ref) => ref.Ref));
    const bootstrap = signingFunctions().find((fn) => fn.name === 'bootstrap')!;
    expect(writers).toEqual([bootstrap.roleId]);
    for (const fn of signingFunctions()) {
      const environment = (resources[fn.functionId]!.Properties.Environment as { Variables: Record<string, Ref> })
        .Variables;
      if (fn.keys.includes('server')) expect(environment[KEY_ID_ENV.server], fn.name).toEqual({ Ref: secretId });
      else expect(environment[KEY_ID_ENV.server], fn.name).toBeUndefined();
    }
  });
});

describe('the secrets key', () => {
  it('is a retained, rotated symmetric key that only the groups sealing secrets may use, and is named to them', () => {
    const secretsId = logicalId(stack.controller.keys.secrets);
    const key = resources[secretsId]!;
    expect(key.Type).toBe('AWS::KMS::Key');
    expect(key.Properties).toMatchObject({ EnableKeyRotation: true });
    expect(key.Properties.KeySpec ?? 'SYMMETRIC_DEFAULT').toBe('SYMMETRIC_DEFAULT');
    expect(key.DeletionPolicy).toBe('Retain');

    const statements = (key.Properties.KeyPolicy as { Statement: Statement[] }).Statement;
    const users = statements
      .filter((statement) => actionsOf(statement).includes('kms:Decrypt'))
      .flatMap((statement) => [statement.Principal?.AWS].flat() as Ref[])
      .map((principal) => principal['Fn::GetAtt']?.[0])
      .sort();
    const expected = [...stack.controller.functions]
      .filter(([group]) => SECRET_GROUPS.includes(group))
      .map(([, fn]) => logicalId(fn.role as never))
      .sort();
    expect(expected.length).toBeGreaterThan(0);
    expect(users).toEqual(expected);

    for (const [group, fn] of stack.controller.functions) {
      const environment = (resources[logicalId(fn)]!.Properties.Environment as { Variables: Record<string, Ref> })
        .Variables;
      expect(environment[SECRET_KEY_ENV], group).toEqual(
        SECRET_GROUPS.includes(group) ? { Ref: secretsId } : undefined,
      );
    }
  });
});

/** What no statement for the whole account may allow: using a key, or letting someone use it. */
const KEY_USE =
  /^kms:(Sign|Verify|Decrypt|Encrypt|ReEncrypt|GenerateDataKey|GenerateMac|VerifyMac|CreateGrant|DeriveSharedSecret)/;
const isAccountRoot = (statement: Statement) => JSON.stringify(statement.Principal?.AWS ?? '').includes(':root');
const keyPolicyOf = (resource: CfnResource) =>
  (resource.Properties.KeyPolicy as { Statement: (Statement & { Condition?: Record<string, unknown> })[] }).Statement;
const kmsKeys = () => Object.entries(resources).filter(([, resource]) => resource.Type === 'AWS::KMS::Key');

describe('every key policy', () => {
  it('lets the account administer the key, named action by action, without using it or granting its use', () => {
    expect(kmsKeys().length).toBeGreaterThanOrEqual(6);
    for (const [id, key] of kmsKeys()) {
      const administration = keyPolicyOf(key).filter((statement) => isAccountRoot(statement) && !statement.Condition);
      expect(administration, id).toHaveLength(1);
      const actions = actionsOf(administration[0]!);
      expect(
        actions.filter((action) => action.includes('*') || KEY_USE.test(action)),
        id,
      ).toEqual([]);
      // KMS refuses a policy its creator could not put again, and CloudFormation updates it with PutKeyPolicy.
      expect(actions, id).toEqual(
        expect.arrayContaining(['kms:PutKeyPolicy', 'kms:DescribeKey', 'kms:ScheduleKeyDeletion']),
      );
    }
  });

  it('lets the account use a key only through Secrets Manager, and only the keys of secrets CloudFormation creates', () => {
    const secretKeys = [stack.controller.keys.adminPasswordEncryption, stack.controller.keys.serverKeyEncryption].map(
      logicalId,
    );
    for (const [id, key] of kmsKeys()) {
      const use = keyPolicyOf(key).filter(
        (statement) => isAccountRoot(statement) && actionsOf(statement).some((action) => KEY_USE.test(action)),
      );
      if (!secretKeys.includes(id)) {
        expect(use, id).toEqual([]);
        continue;
      }
      expect(use).toHaveLength(1);
      expect(actionsOf(use[0]!).sort()).toEqual(['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey']);
      expect(JSON.stringify(use[0]!.Condition)).toMatch(/kms:ViaService.*secretsmanager\./);
    }
  });
});

describe('the admin password secret', () => {
  it("is encrypted under the controller's own key, which only the bootstrap's role is granted, through Secrets Manager", () => {
    const secretId = logicalId(stack.controller.bootstrap.adminPasswordSecret);
    const keyId = logicalId(stack.controller.keys.adminPasswordEncryption);
    expect(resources[secretId]!.Properties.KmsKeyId).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
    expect(resources[keyId]!.Properties).toMatchObject({ EnableKeyRotation: true });
    expect(resources[keyId]!.DeletionPolicy).toBe('Retain');

    const grants = Object.values(resources)
      .filter((resource) => resource.Type === 'AWS::IAM::Policy')
      .flatMap((policy) =>
        (policy.Properties.PolicyDocument as { Statement: (Statement & { Condition?: unknown })[] }).Statement.filter(
          (statement) => JSON.stringify(statement.Resource).includes(keyId),
        ).map((statement) => ({ roles: (policy.Properties.Roles as Ref[]).map((ref) => ref.Ref), statement })),
      );
    const bootstrap = signingFunctions().find((fn) => fn.name === 'bootstrap')!;
    expect(grants.map((grant) => grant.roles)).toEqual([[bootstrap.roleId]]);
    expect(actionsOf(grants[0]!.statement).sort()).toEqual(['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey']);
    expect(JSON.stringify(grants[0]!.statement.Condition)).toMatch(/kms:ViaService.*secretsmanager\./);
  });
});

/** A stack of another environment, with the controller's other settings left to their defaults. */
const synth = (id: string, environment: string) => {
  const otherApp = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  new ControllerStack(otherApp, id, { environment });
  return (otherApp.synth().getStackByName(id).template as { Resources: Record<string, CfnResource> }).Resources;
};
const devResources = synth('DevKeysController', 'dev');

describe("the functions' log groups", () => {
  const functionLogGroups = (template: Record<string, CfnResource>) =>
    Object.values(template)
      .filter((resource) => resource.Type === 'AWS::Lambda::Function')
      .map((fn) => (fn.Properties.LoggingConfig as { LogGroup?: Ref } | undefined)?.LogGroup?.Ref)
      .filter((ref): ref is string => ref !== undefined)
      .map((ref) => [ref, template[ref]!] as const);

  it('are each encrypted under the logs key, which CloudWatch Logs may use for log groups of the account only', () => {
    const logsKeyId = logicalId(stack.controller.keys.logs);
    const groups = functionLogGroups(resources);
    // One per operation group, the bootstrap, the integrity scan, the ended sessions' sweep and the bootstrap's
    // provider.
    expect(groups).toHaveLength(stack.controller.functions.size + 4);
    for (const [id, logGroup] of groups) {
      expect(logGroup.Properties.KmsKeyId, id).toEqual({ 'Fn::GetAtt': [logsKeyId, 'Arn'] });
    }
    const service = keyPolicyOf(resources[logsKeyId]!).filter((statement) =>
      JSON.stringify((statement.Principal as { Service?: unknown } | undefined)?.Service ?? '').includes('logs.'),
    );
    expect(service).toHaveLength(1);
    expect(service[0]!.Condition).toEqual({
      ArnLike: {
        'kms:EncryptionContext:aws:logs:arn': {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':logs:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              ':log-group:*',
            ],
          ],
        },
      },
    });
  });

  it('outlive the stack in production and go with it elsewhere', () => {
    // The stack above is production (the default environment).
    for (const [id, logGroup] of functionLogGroups(resources)) expect(logGroup.DeletionPolicy, id).toBe('Retain');
    const dev = functionLogGroups(devResources);
    expect(dev.length).toBeGreaterThan(0);
    for (const [id, logGroup] of dev) expect(logGroup.DeletionPolicy, id).toBe('Delete');
  });
});

describe("the state machine's, the access log's and the firewall's log groups", () => {
  const otherLogGroups = (template: Record<string, CfnResource>) => {
    const ofType = (type: string) => Object.entries(template).filter(([, resource]) => resource.Type === type);
    // The log group an ARN names (by `Fn::GetAtt`, or inside a `Fn::Join`).
    const logGroupOf = (arn: unknown) =>
      ofType('AWS::Logs::LogGroup').find(([id]) => JSON.stringify(arn).includes(`"${id}"`))?.[0];
    const [[, machine]] = ofType('AWS::StepFunctions::StateMachine') as [[string, CfnResource]];
    const machineLogs = (
      machine.Properties.LoggingConfiguration as {
        Destinations: { CloudWatchLogsLogGroup: { LogGroupArn: unknown } }[];
      }
    ).Destinations[0]!.CloudWatchLogsLogGroup.LogGroupArn;
    const [[, stage]] = ofType('AWS::ApiGateway::Stage') as [[string, CfnResource]];
    const accessLogs = (stage.Properties.AccessLogSetting as { DestinationArn: unknown }).DestinationArn;
    const waf = ofType('AWS::Logs::LogGroup').filter(([, group]) =>
      JSON.stringify(group.Properties.LogGroupName ?? '').includes('aws-waf-logs-'),
    );
    expect(waf).toHaveLength(1);
    return [
      ['state machine', logGroupOf(machineLogs)],
      ['access log', logGroupOf(accessLogs)],
      ['firewall', waf[0]![0]],
    ].map(([name, id]) => [name!, template[id!]!] as const);
  };

  it('are encrypted under the logs key, which CloudWatch Logs may use for any log group of the account', () => {
    const logsKeyId = logicalId(stack.controller.keys.logs);
    for (const [name, logGroup] of otherLogGroups(resources)) {
      expect(logGroup.Properties.KmsKeyId, name).toEqual({ 'Fn::GetAtt': [logsKeyId, 'Arn'] });
    }
    // WAF delivers only to a log group whose name has its prefix.
    expect(JSON.stringify(otherLogGroups(resources)[2]![1].Properties.LogGroupName)).toMatch(/^"aws-waf-logs-/);
  });

  it('outlive the stack in production and go with it elsewhere', () => {
    for (const [name, logGroup] of otherLogGroups(resources)) expect(logGroup.DeletionPolicy, name).toBe('Retain');
    for (const [name, logGroup] of otherLogGroups(devResources)) expect(logGroup.DeletionPolicy, name).toBe('Delete');
  });
});
