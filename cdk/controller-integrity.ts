import { Duration, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { integrityStateMachineDefinition } from '#shared/integrity/state-machine-definition.ts';
import type { BuildStamp } from './build-stamp.ts';
import { ControllerFunction, DEFAULT_LOG_RETENTION, type FunctionLogOptions, keptAs } from './controller-function.ts';
import { grantTableData } from './controller-table.ts';
import { tableActionsOf } from './operation-groups.ts';

export interface ControllerIntegrityProps {
  readonly table: ITable;
  readonly tableName: string;
  /** The database group's function: it starts runs and takes snapshots. */
  readonly databaseFunction: IFunction & { addEnvironment(name: string, value: string): unknown };
  readonly buildStamp: BuildStamp;
  readonly memorySize?: number;
  /** How the functions' log groups, and the state machine's, are kept. */
  readonly logs?: FunctionLogOptions;
}

/**
 * The data-integrity run: its Task function (one segment per invocation, up to 15 minutes each) and the Step
 * Functions state machine built from the same ASL definition the local runner executes
 * (`shared/integrity/state-machine-definition.ts`). The database function may start executions of this state
 * machine and back up the table, nothing more.
 */
export class ControllerIntegrity extends Construct {
  readonly function: ControllerFunction;
  readonly stateMachine: StateMachine;

  constructor(scope: Construct, id: string, props: ControllerIntegrityProps) {
    super(scope, id);
    this.function = new ControllerFunction(this, 'Function', {
      source: 'integrity',
      description: 'Ziti controller: data-integrity scan segments',
      timeout: Duration.minutes(15),
      environment: { TABLE_NAME: props.tableName },
      buildStamp: props.buildStamp,
      ...(props.memorySize ? { memorySize: props.memorySize } : {}),
      ...(props.logs ? { logs: props.logs } : {}),
    });
    grantTableData(props.table, this.function, tableActionsOf('integrity'));

    // The state machine calls the function's live alias: a rollback of the alias rolls the scan back with it.
    const definition = JSON.stringify(integrityStateMachineDefinition(this.function.live.functionArn));
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      definitionBody: DefinitionBody.fromString(definition),
      timeout: Duration.hours(2),
      tracingEnabled: true,
      logs: {
        destination: new LogGroup(this, 'StateMachineLogs', {
          retention: props.logs?.retention ?? DEFAULT_LOG_RETENTION,
          ...keptAs(props.logs),
        }),
        level: LogLevel.ALL,
        includeExecutionData: false,
      },
    });
    this.function.live.grantInvoke(this.stateMachine);
    Validations.of(this.stateMachine.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Step Functions log delivery (logs:*LogDelivery, DescribeResourcePolicies, DescribeLogGroups, ' +
        'PutResourcePolicy) and X-Ray tracing take no resource ARN; a CDK test fails on any other action on `*`.',
    });

    this.stateMachine.grantStartExecution(props.databaseFunction);
    props.databaseFunction.addEnvironment('INTEGRITY_STATE_MACHINE_ARN', this.stateMachine.stateMachineArn);
    props.databaseFunction.role?.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['dynamodb:CreateBackup'], resources: [props.table.tableArn] }),
    );
  }
}
