import { Duration, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Construct } from 'constructs';
import { SWEEP_LEASE_MS } from '#shared/auth/ended-sessions-sweep.ts';
import type { BuildStamp } from './build-stamp.ts';
import { ControllerFunction, type FunctionLogOptions } from './controller-function.ts';
import { grantTableData } from './controller-table.ts';
import { tableActionsOf, tableIndexesOf } from './operation-groups.ts';

/** How often the sweep runs: what `shared/auth/ended-sessions-sweep.ts` is written for. */
export const SESSION_SWEEP_INTERVAL = Duration.minutes(1);

/**
 * How long one run may take: Lambda's most. A run writes its mark only at its end, so one cut short leaves the next to
 * start again from the same mark; a backlog (thousands of identities disabled at once) must fit in one run.
 */
/** A run's longest: the sweep's lease, so a run that dies frees the sweep when it times out. */
const SESSION_SWEEP_TIMEOUT = Duration.millis(SWEEP_LEASE_MS);

export interface ControllerSessionSweepProps {
  readonly table: ITable;
  readonly buildStamp: BuildStamp;
  readonly memorySize?: number;
  /** How its log group is kept. */
  readonly logs?: FunctionLogOptions;
}

/**
 * The ended sessions' sweep on AWS: a function that runs `sweepEndedSessions` (`functions/session-sweep/`), invoked
 * through its `live` alias by an EventBridge schedule every minute. A change that ends sessions (an identity disabled,
 * locked out, revoked or deleted; an authenticator deleted) refuses them and tells the routers at its commit, and
 * removes the first transaction's worth of them; this removes the rest from the table. Its role reads and writes the
 * table, and of the indexes GSI2 alone (`tableIndexesOf`).
 */
export class ControllerSessionSweep extends Construct {
  readonly function: ControllerFunction;
  readonly schedule: Rule;

  constructor(scope: Construct, id: string, props: ControllerSessionSweepProps) {
    super(scope, id);
    this.function = new ControllerFunction(this, 'Function', {
      source: 'session-sweep',
      description: 'Ziti controller: removes the API sessions that changes ended (every minute)',
      timeout: SESSION_SWEEP_TIMEOUT,
      environment: { TABLE_NAME: props.table.tableName },
      // One run at a time, by a lease in the table (`sweepEndedSessions`), not by reserved concurrency: an account
      // whose concurrency quota is the default of a new one (10) refuses any reservation, and the stack with it.
      asynchronousWithoutDeadLetterQueue:
        'Invoked asynchronously by its schedule alone, whose event carries nothing: what a run that failed or never ' +
        "ran left is the next minute's run's, which resumes from the sweep's mark in the table; a dead-letter queue " +
        'would keep events with nothing in them to replay.',
      buildStamp: props.buildStamp,
      ...(props.memorySize ? { memorySize: props.memorySize } : {}),
      ...(props.logs ? { logs: props.logs } : {}),
    });
    grantTableData(props.table, this.function, tableActionsOf('session-sweep'), tableIndexesOf('session-sweep'));
    // The next minute's run is the retry: Lambda's own retries (one and three minutes later) would only run beside
    // it. An event that waited a minute behind a long run is dropped; another comes.
    this.function.live.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: SESSION_SWEEP_INTERVAL });
    Validations.of(this.function.live.node.findChild('EventInvokeConfig')).acknowledge({
      id: 'Serverless-LambdaAsyncFailureDestination',
      reason:
        "A failed run's event carries nothing to handle: the failure is in the function's log and its errors alarm, " +
        "and the next minute's run sweeps what it left.",
    });

    // The schedule invokes the live alias, as the API and the state machine do: a rollback of the alias rolls the
    // sweep back with it.
    this.schedule = new Rule(this, 'Schedule', {
      description: "Ziti controller: runs the ended sessions' sweep every minute",
      schedule: Schedule.rate(SESSION_SWEEP_INTERVAL),
      targets: [new LambdaFunction(this.function.live)],
    });
    Validations.of(this.schedule).acknowledge({
      id: 'Serverless-EventBusDLQ',
      reason:
        "The minute's event carries nothing but the time: an undelivered one needs no replay, as the next minute's " +
        'event runs the same sweep from the same mark.',
    });
  }
}
