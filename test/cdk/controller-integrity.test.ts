import { createRequire } from 'node:module';
import { App, type CfnElement } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { integrityStateMachineDefinition } from '#shared/integrity/state-machine-definition.ts';
import { ControllerStack } from '../../cdk/controller-stack.ts';
import { cdkJsonContext } from './synth-context.ts';

// asl-validator is CommonJS with no type declarations.
const aslValidator = createRequire(import.meta.url)('asl-validator') as (definition: unknown) => {
  isValid: boolean;
  errorsText: (separator?: string) => string;
};

type Intrinsic = { readonly Ref?: string; readonly 'Fn::GetAtt'?: readonly [string, string] };
interface CfnResource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
}
interface Statement {
  readonly Action: string | string[];
  readonly Resource: unknown;
}

const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
const stack = new ControllerStack(app, 'IntegrityController', { adminUsername: 'admin', apiSessionTimeoutMinutes: 30 });
const resources = (
  app.synth().getStackByName('IntegrityController').template as { Resources: Record<string, CfnResource> }
).Resources;
const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

function statementsOf(roleId: string): Statement[] {
  return Object.values(resources)
    .filter((resource) => resource.Type === 'AWS::IAM::Policy')
    .filter((policy) => (policy.Properties.Roles as Intrinsic[]).some((role) => role.Ref === roleId))
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

describe('the integrity state machine', () => {
  it('has a valid Amazon States Language definition', () => {
    const result = aslValidator(
      integrityStateMachineDefinition('arn:aws:lambda:eu-west-1:123456789012:function:ziti-controller-integrity'),
    );
    expect(result.isValid, result.errorsText('\n')).toBe(true);
  });

  it("is deployed from that definition, calling the integrity function's live alias, with logs and tracing", () => {
    const integrity = stack.controller.integrity!;
    const machine = resources[logicalId(integrity.stateMachine)]!;
    expect(machine.Type).toBe('AWS::StepFunctions::StateMachine');
    expect(machine.Properties.TracingConfiguration).toEqual({ Enabled: true });
    expect(machine.Properties.LoggingConfiguration).toMatchObject({ Level: 'ALL' });
    const body = JSON.stringify(machine.Properties.DefinitionString);
    const aliasId = logicalId(integrity.function.live);
    // Every Task names the integrity function's live alias (its ARN resolved at deploy time).
    expect(body.match(new RegExp(`"Ref":"${aliasId}"`, 'g'))).toHaveLength(3);
    const placeholder = integrityStateMachineDefinition('FUNCTION_ARN');
    expect(JSON.stringify(placeholder).match(/FUNCTION_ARN/g)).toHaveLength(3);
  });

  it('is started by the database function only, which may also back up the table and nothing else new', () => {
    const integrity = stack.controller.integrity!;
    const machineId = logicalId(integrity.stateMachine);
    const database = stack.controller.functions.get('database')!;
    const environment = (
      resources[logicalId(database)]!.Properties.Environment as { Variables: Record<string, unknown> }
    ).Variables;
    expect(environment.INTEGRITY_STATE_MACHINE_ARN).toEqual({ Ref: machineId });
    const starters = Object.values(resources)
      .filter((resource) => resource.Type === 'AWS::IAM::Policy')
      .filter((policy) =>
        (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement.some((statement) =>
          [statement.Action].flat().includes('states:StartExecution'),
        ),
      )
      .flatMap((policy) => (policy.Properties.Roles as Intrinsic[]).map((role) => role.Ref));
    expect(starters).toEqual([logicalId(database.role as never)]);
    const statements = statementsOf(logicalId(database.role as never));
    const start = statements.find((statement) => [statement.Action].flat().includes('states:StartExecution'))!;
    expect(start.Resource).toEqual({ Ref: machineId });
    const backup = statements.find((statement) => [statement.Action].flat().includes('dynamodb:CreateBackup'))!;
    expect(backup.Resource).toEqual({ 'Fn::GetAtt': [logicalId(stack.controller.table), 'Arn'] });
  });
});
