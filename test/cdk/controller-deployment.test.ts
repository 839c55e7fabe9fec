import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { TABLE_KEYS } from '#shared/store/table-definition.ts';
import { repositoryBuildStamp } from '../../cdk/build-stamp.ts';
import { REDACTED_REQUEST_PARTS } from '../../cdk/controller-firewall.ts';
import { LIVE_ALIAS } from '../../cdk/controller-function.ts';
import { TRUSTSTORE_KEY } from '../../cdk/controller-mtls-domain.ts';
import { ControllerStack, type ControllerStackProps } from '../../cdk/controller-stack.ts';
import { TAG_KEYS } from '../../cdk/ziti-controller.ts';
import { cdkJsonContext } from './synth-context.ts';

interface CfnResource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
  readonly DeletionPolicy?: string;
  readonly UpdateReplacePolicy?: string;
  readonly DependsOn?: string[];
}

const STAMP = { version: 'v3.2.1', revision: 'fedcba987654', buildDate: '2026-10-01T00:00:00Z' };

function synth(props: ControllerStackProps = {}, id = 'DeployedController') {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new ControllerStack(app, id, { buildStamp: STAMP, ...props });
  const template = Template.fromStack(stack);
  const json = template.toJSON() as { Resources: Record<string, CfnResource>; Outputs: Record<string, unknown> };
  const ofType = (type: string) => Object.entries(json.Resources).filter(([, resource]) => resource.Type === type);
  const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as CfnElement);
  return { stack, template, resources: json.Resources, outputs: json.Outputs, ofType, logicalId };
}

const tagsOf = (resource: CfnResource) =>
  Object.fromEntries(
    ((resource.Properties.Tags as { Key: string; Value: string }[] | undefined) ?? []).map((t) => [t.Key, t.Value]),
  );

describe('the environment', () => {
  const staging = synth({ environment: 'staging' });

  it('names the API stage, so its URL says which environment it is', () => {
    const [stageId, stage] = staging.ofType('AWS::ApiGateway::Stage')[0]!;
    expect(stage.Properties.StageName).toBe('staging');
    expect(JSON.stringify(staging.outputs.ClientApiUrl)).toContain(`{"Ref":"${stageId}"},"/edge/client/v1"`);
  });

  it('and the version tag every taggable resource: functions, the table, keys, the API, logs, alarms', () => {
    const taggable = Object.entries(staging.resources).filter(([, resource]) => 'Tags' in resource.Properties);
    expect(taggable.length).toBeGreaterThan(50);
    for (const [id, resource] of taggable) {
      expect(tagsOf(resource), id).toMatchObject({ [TAG_KEYS.environment]: 'staging', [TAG_KEYS.version]: 'v3.2.1' });
    }
    for (const type of [
      'AWS::Lambda::Function',
      'AWS::DynamoDB::Table',
      'AWS::KMS::Key',
      'AWS::ApiGateway::RestApi',
      'AWS::CloudWatch::Alarm',
      'AWS::SNS::Topic',
    ]) {
      expect(
        staging.ofType(type).every(([, resource]) => tagsOf(resource)[TAG_KEYS.environment] === 'staging'),
        type,
      ).toBe(true);
    }
  });

  it('is in every name the stack gives, through the stack name the app makes of it', () => {
    // CloudFormation names the other resources `<stack name>-<logical id>-<suffix>`: the stack name is in those too.
    const named = synth({ environment: 'staging' }, 'ZitiController-staging');
    const given: [string, string, unknown][] = [];
    for (const [id, resource] of Object.entries(named.resources)) {
      const properties = resource.Properties ?? {};
      for (const key of ['AlarmName', 'DashboardName', 'LogGroupName', 'Name', 'DisplayName', 'Namespace']) {
        const value = properties[key];
        // An alarm on AWS's own metrics names AWS's namespace (`AWS/Lambda`), not one of the stack's.
        if (typeof value === 'string' && !(key === 'Namespace' && value.startsWith('AWS/')))
          given.push([id, key, value]);
      }
      const visibility = properties.VisibilityConfig as { MetricName?: string } | undefined;
      if (visibility?.MetricName) given.push([id, 'VisibilityConfig.MetricName', visibility.MetricName]);
    }
    // The alarms alone are two per function, the API's, the table's, the web ACL's, the integrity run's and KMS's.
    expect(given.length).toBeGreaterThan(30);
    // An alias is named `live` under its function, whose name CloudFormation makes of the stack name.
    const inside = new Set(['AWS::Lambda::Alias']);
    for (const [id, key, name] of given) {
      if (inside.has(named.resources[id]!.Type)) continue;
      expect(name, `${id}.${key}`).toMatch(/ZitiController-staging/);
    }
  });

  it('outputs the version, revision and build date the functions report', () => {
    expect(staging.outputs.Version).toMatchObject({ Value: 'v3.2.1 fedcba987654 2026-10-01T00:00:00Z' });
  });

  it("leaves the account's API Gateway logging role alone unless asked to set it", () => {
    expect(staging.ofType('AWS::ApiGateway::Account')).toEqual([]);
    const asked = synth({ apiGatewayCloudWatchRole: true });
    expect(asked.ofType('AWS::ApiGateway::Account')).toHaveLength(1);
    // Kept when the stack goes: other APIs of the account may log through it by then.
    expect(asked.ofType('AWS::IAM::Role').some(([, role]) => role.DeletionPolicy === 'Retain')).toBe(true);
  });

  it('sends per-method API metrics only when asked (they are billed per metric)', () => {
    const methodMetrics = (settings: ReturnType<typeof synth>) =>
      (settings.ofType('AWS::ApiGateway::Stage')[0]![1].Properties.MethodSettings as Record<string, unknown>[])
        .filter((setting) => setting.ResourcePath === '/*')
        .map((setting) => setting.MetricsEnabled);
    expect(methodMetrics(staging)).toEqual([false]);
    expect(methodMetrics(synth({ detailedMetrics: true }))).toEqual([true]);
  });

  it('refuses a name that cannot be part of the stage and resource names', () => {
    expect(() => synth({ environment: 'Prod Env' })).toThrow(/environment must be lowercase letters/);
  });
});

describe('the app', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));

  /** Runs `cdk/app.ts` as the CDK CLI does (context and output directory in the environment), bundling skipped. */
  function synthApp(context: Record<string, unknown>) {
    const outdir = mkdtempSync(join(tmpdir(), 'controller-app-'));
    try {
      execFileSync(process.execPath, ['cdk/app.ts'], {
        cwd: root,
        env: {
          PATH: process.env.PATH,
          CDK_OUTDIR: outdir,
          CDK_CONTEXT_JSON: JSON.stringify({ ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], ...context }),
        },
        stdio: 'pipe',
      });
      const manifest = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8')) as {
        artifacts: Record<string, { type: string; properties?: { terminationProtection?: boolean } }>;
      };
      return Object.entries(manifest.artifacts)
        .filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack')
        .map(([name, artifact]) => ({
          name,
          terminationProtection: artifact.properties?.terminationProtection === true,
        }));
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }

  // Each run is a Node start that synthesises the whole app: about 10 s on a loaded two-core machine.
  it('deploys one environment per stack, named after it; production is protected from termination', {
    timeout: 180_000,
  }, () => {
    // The smallest deploy SDKs can use (docs/aws.md, "First deploy"), and one for the management API alone.
    const domains = {
      domainName: 'ziti.example.com',
      mtlsDomainName: 'ziti-mtls.example.com',
      sdkDomainName: 'ziti-sdk.example.com',
      hostedZoneId: 'Z0123456789ABCDEFGHIJ',
      hostedZoneName: 'example.com',
    };
    expect(synthApp(domains)).toEqual([{ name: 'ZitiController-prod', terminationProtection: true }]);
    expect(synthApp({ environment: 'dev', managementOnly: true })).toEqual([
      { name: 'ZitiController-dev', terminationProtection: false },
    ]);
  });

  it('refuses an asset bucket for CloudFormation alone that S3 would not name so, before synthesising', () => {
    expect(() => synthApp({ assetBucket: 'Ziti Assets', managementOnly: true })).toThrow(
      /assetBucket must be an S3 bucket name/,
    );
  });
});

describe('the build stamp of this repository', () => {
  it("is the package's version, the commit and its date, and SOURCE_DATE_EPOCH when set", () => {
    const stamp = repositoryBuildStamp({});
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(stamp.version).toBe(`v${version}`);
    expect(stamp.revision).toMatch(/^([0-9a-f]{12}(-dirty)?|unknown)$/);
    expect(stamp.buildDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(repositoryBuildStamp({ SOURCE_DATE_EPOCH: '1767225600' }).buildDate).toBe('2026-01-01T00:00:00Z');
  });

  it('is the same on every synth of a clean work tree, so a redeploy publishes no new function version', () => {
    const first = repositoryBuildStamp({}, new Date('2026-01-01T00:00:00Z'));
    const later = repositoryBuildStamp({}, new Date('2026-02-01T00:00:00Z'));
    if (first.revision.endsWith('-dirty') || first.revision === 'unknown') {
      expect(later.buildDate).not.toBe(first.buildDate);
    } else {
      expect(later).toEqual(first);
    }
  });
});

describe('releases', () => {
  const { stack, resources, ofType, logicalId } = synth();

  it('publish a version of each function and point its live alias at it; old versions are kept for a rollback', () => {
    const functions = [
      ...stack.controller.functions.values(),
      stack.controller.bootstrap.function,
      stack.controller.integrity!.function,
      stack.controller.sessionSweep.function,
    ];
    for (const fn of functions) {
      const alias = resources[logicalId(fn.live)]!;
      expect(alias.Properties).toMatchObject({ Name: LIVE_ALIAS, FunctionName: { Ref: logicalId(fn) } });
      const versionId = (alias.Properties.FunctionVersion as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      expect(resources[versionId]).toMatchObject({
        Type: 'AWS::Lambda::Version',
        DeletionPolicy: 'Retain',
        Properties: { FunctionName: { Ref: logicalId(fn) } },
      });
    }
    expect(ofType('AWS::Lambda::Alias')).toHaveLength(functions.length);
  });

  it('run the bootstrap on every deploy: its custom resource changes with each synth', () => {
    const [, run] = ofType('Custom::ControllerBootstrap')[0]!;
    const again = synth().ofType('Custom::ControllerBootstrap')[0]![1];
    expect(run.Properties.revision).toBe(STAMP.revision);
    expect(run.Properties.deployId).not.toBe(again.Properties.deployId);
    expect(synth({ deployId: 'fixed' }).ofType('Custom::ControllerBootstrap')[0]![1].Properties.deployId).toBe('fixed');
  });

  it("invoke the bootstrap through its alias, from the custom resource provider's role only", () => {
    const aliasId = logicalId(stack.controller.bootstrap.function.live);
    const invokers = ofType('AWS::IAM::Policy').filter(([, policy]) =>
      JSON.stringify(policy.Properties.PolicyDocument).includes(`{"Ref":"${aliasId}"}`),
    );
    expect(invokers).toHaveLength(1);
  });
});

describe('the admin password secret', () => {
  it('rotates through the bootstrap function when asked, and on a schedule when one is set', () => {
    const onDemand = synth();
    const [, rotation] = onDemand.ofType('AWS::SecretsManager::RotationSchedule')[0]!;
    expect(rotation.Properties).toEqual({
      SecretId: { Ref: onDemand.logicalId(onDemand.stack.controller.bootstrap.adminPasswordSecret) },
      RotationLambdaARN: { Ref: onDemand.logicalId(onDemand.stack.controller.bootstrap.function.live) },
      RotateImmediatelyOnUpdate: false,
    });
    const permissionId = rotation.DependsOn?.find((id) => onDemand.resources[id]?.Type === 'AWS::Lambda::Permission');
    expect(onDemand.resources[permissionId!]?.Properties).toMatchObject({
      Principal: 'secretsmanager.amazonaws.com',
      SourceAccount: { Ref: 'AWS::AccountId' },
    });

    const scheduled = synth({ adminPasswordRotationDays: 90 });
    scheduled.template.hasResourceProperties('AWS::SecretsManager::RotationSchedule', {
      RotationRules: { ScheduleExpression: 'rate(90 days)' },
    });
  });

  it('is the only secret the bootstrap may rotate, and it is not granted GetRandomPassword on *', () => {
    const { stack, ofType, logicalId } = synth();
    const roleId = logicalId(stack.controller.bootstrap.function.role as never);
    const statements = ofType('AWS::IAM::Policy')
      .filter(([, policy]) => JSON.stringify(policy.Properties.Roles).includes(roleId))
      .flatMap(
        ([, policy]) => (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
      );
    const rotate = statements.find((statement) => statement.Sid === 'RotateAdminPassword');
    expect(rotate?.Resource).toEqual({ Ref: logicalId(stack.controller.bootstrap.adminPasswordSecret) });
    expect(JSON.stringify(statements)).not.toContain('GetRandomPassword');
  });
});

describe('an imported table', () => {
  const restored = synth({ tableName: 'ziti-controller-restored' });

  it('is used by name instead of a new one: no table in the template, every function pointed at it', () => {
    expect(restored.ofType('AWS::DynamoDB::Table')).toEqual([]);
    for (const [group, fn] of restored.stack.controller.functions) {
      const environment = (
        restored.resources[restored.logicalId(fn)]!.Properties.Environment as {
          Variables: Record<string, unknown>;
        }
      ).Variables;
      expect(environment.TABLE_NAME, group).toBe('ziti-controller-restored');
    }
    expect(restored.outputs.TableName).toMatchObject({ Value: 'ziti-controller-restored' });
  });

  it('is granted with its indexes, by ARN, as the created one is', () => {
    const policies = JSON.stringify(restored.ofType('AWS::IAM::Policy').map(([, policy]) => policy.Properties));
    expect(policies).toContain(':table/ziti-controller-restored"');
    expect(policies).toContain(':table/ziti-controller-restored/index/*"');
    expect(TABLE_KEYS.indexes.length).toBeGreaterThan(0);
  });

  it('refuses a name DynamoDB would not take', () => {
    expect(() => synth({ tableName: 'a b' })).toThrow(/tableName must be a DynamoDB table name/);
  });
});

describe('the web ACL log', () => {
  const { ofType, stack } = synth();

  it('goes to a retained aws-waf-logs- log group, without the session token, bearer tokens or query strings', () => {
    const [groupId, group] = ofType('AWS::Logs::LogGroup').find(([, g]) =>
      String(g.Properties.LogGroupName).startsWith('aws-waf-logs-'),
    )!;
    expect(group.Properties.LogGroupName).toBe('aws-waf-logs-DeployedController');
    expect(group.DeletionPolicy).toBe('Retain');
    const [, logging] = ofType('AWS::WAFv2::LoggingConfiguration')[0]!;
    expect(logging.Properties.ResourceArn).toEqual({
      'Fn::GetAtt': [stack.getLogicalId(stack.controller.firewall!.webAcl), 'Arn'],
    });
    expect(JSON.stringify(logging.Properties.LogDestinationConfigs)).toContain(
      ':log-group:aws-waf-logs-DeployedController',
    );
    expect(JSON.stringify(logging.Properties.LogDestinationConfigs)).not.toContain(':*');
    expect(logging.Properties.RedactedFields).toEqual([
      { SingleHeader: { Name: 'zt-session' } },
      { SingleHeader: { Name: 'authorization' } },
      { QueryString: {} },
    ]);
    expect(REDACTED_REQUEST_PARTS).toHaveLength(3);
    expect(logging.DependsOn).toContain(groupId);
  });

  it('keeps what a rule blocked or counted and drops what passed (the access logs have those)', () => {
    const [, logging] = ofType('AWS::WAFv2::LoggingConfiguration')[0]!;
    expect(logging.Properties.LoggingFilter).toEqual({
      DefaultBehavior: 'DROP',
      Filters: [
        {
          Behavior: 'KEEP',
          Requirement: 'MEETS_ANY',
          Conditions: [
            { ActionCondition: { Action: 'BLOCK' } },
            { ActionCondition: { Action: 'COUNT' } },
            { ActionCondition: { Action: 'EXCLUDED_AS_COUNT' } },
          ],
        },
      ],
    });
  });
});

describe('the truststore trail', () => {
  it('records every write of the truststore object, and nothing else, to a bucket of its own', () => {
    const { ofType, logicalId, stack } = synth();
    const [, trail] = ofType('AWS::CloudTrail::Trail')[0]!;
    expect(trail.Properties).toMatchObject({
      IsLogging: true,
      IsMultiRegionTrail: false,
      IncludeGlobalServiceEvents: false,
      EnableLogFileValidation: true,
      EventSelectors: [
        {
          IncludeManagementEvents: false,
          ReadWriteType: 'WriteOnly',
          DataResources: [{ Type: 'AWS::S3::Object', Values: [expect.anything()] }],
        },
      ],
    });
    const values = JSON.stringify(
      (trail.Properties.EventSelectors as { DataResources: unknown[] }[])[0]!.DataResources,
    );
    expect(values).toContain(logicalId(stack.controller.mtls!.bucket));
    expect(values).toContain(`/${TRUSTSTORE_KEY}`);
  });

  it('is left out when the operator says an account trail records the bucket', () => {
    expect(synth({ truststoreTrail: false }).ofType('AWS::CloudTrail::Trail')).toEqual([]);
  });
});
