import { App, type CfnElement } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { ControllerStack, type ControllerStackProps } from '../../cdk/controller-stack.ts';
import { cdkJsonContext } from './synth-context.ts';

type Intrinsic = { readonly Ref?: string; readonly 'Fn::GetAtt'?: readonly [string, string] };
interface CfnResource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
}
interface Statement {
  readonly Action: string | string[];
  readonly Resource: unknown;
}

function synth(props: ControllerStackProps = {}) {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new ControllerStack(app, 'SweptController', {
    adminUsername: 'admin',
    apiSessionTimeoutMinutes: 30,
    ...props,
  });
  const resources = (
    app.synth().getStackByName('SweptController').template as { Resources: Record<string, CfnResource> }
  ).Resources;
  const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const ofType = (type: string) => Object.values(resources).filter((resource) => resource.Type === type);
  const sweep = stack.controller.sessionSweep;
  const functionId = logicalId(sweep.function);
  const roleId = logicalId(sweep.function.role as never);
  const tableStatements = ofType('AWS::IAM::Policy')
    .filter((policy) => (policy.Properties.Roles as Intrinsic[]).some((role) => role.Ref === roleId))
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
    .filter((statement) => [statement.Action].flat().some((action) => action.startsWith('dynamodb:')));
  return { stack, resources, logicalId, ofType, sweep, functionId, tableStatements };
}

describe("the ended sessions' sweep", () => {
  const { resources, logicalId, ofType, sweep, functionId, tableStatements, stack } = synth();

  it("runs every minute, on its function's live alias", () => {
    const rule = resources[logicalId(sweep.schedule)]!;
    expect(rule.Type).toBe('AWS::Events::Rule');
    expect(rule.Properties).toMatchObject({ ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
    const aliasId = logicalId(sweep.function.live);
    expect(resources[aliasId]?.Properties).toMatchObject({ Name: 'live', FunctionName: { Ref: functionId } });
    expect((rule.Properties.Targets as { Arn: unknown }[]).map((target) => target.Arn)).toEqual([{ Ref: aliasId }]);
    // EventBridge may invoke the alias, from this rule only; nothing else may invoke the function or its alias.
    const invokers = ofType('AWS::Lambda::Permission').filter((permission) =>
      [functionId, aliasId].some((id) => JSON.stringify(permission.Properties.FunctionName).includes(`"${id}"`)),
    );
    expect(invokers.map((permission) => permission.Properties)).toEqual([
      expect.objectContaining({
        Action: 'lambda:InvokeFunction',
        Principal: 'events.amazonaws.com',
        FunctionName: { Ref: aliasId },
        SourceArn: { 'Fn::GetAtt': [logicalId(sweep.schedule), 'Arn'] },
      }),
    ]);
  });

  it('runs for up to 15 minutes (the sweep lease), never retried by Lambda, reserving no concurrency, with a log group of its own', () => {
    const fn = resources[functionId]!;
    // One run at a time is the sweep's lease in the table: a reservation would fail a new account's deploy.
    expect(fn.Properties.ReservedConcurrentExecutions).toBeUndefined();
    expect(fn.Properties).toMatchObject({
      Timeout: 900,
      MemorySize: 256,
      Handler: 'index.handler',
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      TracingConfig: { Mode: 'Active' },
      Environment: { Variables: { TABLE_NAME: { Ref: logicalId(stack.controller.table) } } },
    });
    const logGroup = (fn.Properties.LoggingConfig as { LogGroup: Intrinsic }).LogGroup.Ref!;
    expect(resources[logGroup]?.Type).toBe('AWS::Logs::LogGroup');
    const [config, ...more] = ofType('AWS::Lambda::EventInvokeConfig');
    expect(more).toEqual([]);
    // On the live alias (its name, from its ARN), which is what the schedule invokes.
    expect(config?.Properties).toEqual({
      FunctionName: { Ref: functionId },
      Qualifier: { 'Fn::Select': [7, { 'Fn::Split': [':', { Ref: logicalId(sweep.function.live) }] }] },
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 60,
    });
  });

  it('reads and writes the table and queries GSI2 alone, never scanning or batch-writing', () => {
    const tableArn = { 'Fn::GetAtt': [logicalId(stack.controller.table), 'Arn'] };
    expect(tableStatements).toHaveLength(1);
    const [statement] = tableStatements;
    expect(new Set([statement!.Action].flat())).toEqual(
      new Set([
        'dynamodb:GetItem',
        'dynamodb:BatchGetItem',
        'dynamodb:Query',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
        'dynamodb:ConditionCheckItem',
      ]),
    );
    // No `index/*`: the table and GSI2, by name.
    expect(statement!.Resource).toEqual([tableArn, { 'Fn::Join': ['', [tableArn, '/index/GSI2']] }]);
  });

  it('is granted GSI2 by name on an imported table too', () => {
    const imported = synth({ tableName: 'ziti-restored' });
    const resources = imported.tableStatements.flatMap((statement) => [statement.Resource].flat());
    expect(resources).toHaveLength(2);
    expect(JSON.stringify(resources[0])).toMatch(/:table\/ziti-restored"/);
    expect(JSON.stringify(resources[1])).toMatch(/:table\/ziti-restored\/index\/GSI2"/);
  });
});
