import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import {
  Alias,
  ApplicationLogLevel,
  Architecture,
  Code,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type LogGroupProps, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { type BuildStamp, buildStampDefine } from './build-stamp.ts';
import { bundledFunctionCode } from './function-bundle.ts';
import { functionMemoryMb } from './function-memory.ts';
import { FunctionRole } from './function-role.ts';

/**
 * Where the construct package keeps its function bundles, relative to its own module: set (esbuild `define`) when the
 * package is built (`scripts/build-package.ts`), which bundles every function ahead; unset in this repository, where
 * each synth bundles the sources.
 */
declare const ZITI_PREBUILT_FUNCTIONS: string | undefined;

/** The bundle the construct package ships for a function, or undefined when the synth bundles it (this repository). */
function prebuiltCode(source: string): Code | undefined {
  if (typeof ZITI_PREBUILT_FUNCTIONS !== 'string') return undefined;
  return Code.fromAsset(fileURLToPath(new URL(`${ZITI_PREBUILT_FUNCTIONS}/${source}`, import.meta.url)));
}

/** The alias API Gateway, the state machine and the schedules invoke: moving it is how an upgrade goes live. */
export const LIVE_ALIAS = 'live';

/** How long a function's logs are kept unless the stack says otherwise. */
export const DEFAULT_LOG_RETENTION = RetentionDays.ONE_MONTH;

/** The API's deadline: the reference controller answers 503 `TIMEOUT` after 10 s, so API Gateway does too. */
export const REQUEST_DEADLINE = Duration.seconds(10);

/**
 * A Lambda timeout past the API deadline, so that API Gateway's integration timeout (503 `TIMEOUT`) answers a slow
 * request rather than a killed function (which API Gateway reports as a 5xx integration failure).
 */
const FUNCTION_TIMEOUT = REQUEST_DEADLINE.plus(Duration.seconds(2));

/** The CloudWatch namespace of the controller's metrics (EMF, Powertools), in every environment. */
export const METRICS_NAMESPACE = 'ZitiController';

/**
 * The level of the functions' own lines, the code's (`POWERTOOLS_LOG_LEVEL`) and Lambda's filter alike, so that Lambda
 * drops nothing the code writes and Powertools does not warn of a mismatch. Not WARN: Lambda counts a JSON line
 * without a `level` as INFO, and the EMF documents the metrics come from have none.
 */
export const APPLICATION_LOG_LEVEL = ApplicationLogLevel.INFO;

/**
 * The level of Lambda's own lines: WARN leaves out the START, END and REPORT lines of every healthy invocation (some
 * 900 bytes of JSON each, more than a request's own summary line: `docs/performance.md`). Lambda's metrics
 * (Duration, Errors, Throttles, ConcurrentExecutions) do not come from them, and no alarm or metric filter reads them
 * (`controller-monitoring.ts`); a request's duration and outcome are in its summary line where one is written.
 */
export const SYSTEM_LOG_LEVEL = SystemLogLevel.WARN;

/**
 * Powertools' settings on every function: the service is the stack (`ZitiController-<environment>`), so the metrics'
 * `service` dimension and the log lines' `service` key tell environments apart in one account; INFO logs.
 */
export function powertoolsEnvironment(scope: Construct): Record<string, string> {
  return {
    POWERTOOLS_SERVICE_NAME: Stack.of(scope).stackName,
    POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
    POWERTOOLS_LOG_LEVEL: APPLICATION_LOG_LEVEL,
    // Responses carry session tokens and secrets: never copied into traces (the middleware says so too).
    POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
  };
}

export interface ControllerFunctionProps {
  /** The directory under `functions/` whose `handler.ts` exports `handler`. */
  readonly source: string;
  readonly description: string;
  readonly environment?: Readonly<Record<string, string>>;
  /** Defaults to two seconds past {@link REQUEST_DEADLINE}. */
  readonly timeout?: Duration;
  /**
   * Why the function needs no dead-letter queue although something also invokes it asynchronously (the bootstrap's
   * daily schedule). Unset: it is invoked synchronously only, which is the reason given.
   */
  readonly asynchronousWithoutDeadLetterQueue?: string;
  /** The version, revision and date the bundle reports (`/version`), stamped into it at synth. */
  readonly buildStamp: BuildStamp;
  /** Defaults to the measured size of its source ({@link functionMemoryMb}). */
  readonly memorySize?: number;
  /** How its log group is kept. */
  readonly logs?: FunctionLogOptions;
  /** At most this many invocations at once, reserved out of the account's concurrency; unset: none reserved. */
  readonly reservedConcurrentExecutions?: number;
}

/** How a function's log group is kept. */
export interface FunctionLogOptions extends LogGroupKeeping {
  /** Defaults to {@link DEFAULT_LOG_RETENTION}. */
  readonly retention?: RetentionDays;
}

/** How every log group of the stack is kept, whatever its retention: the functions', the API's, the firewall's. */
export interface LogGroupKeeping {
  /**
   * The KMS key the log group is encrypted under (`ControllerKeys.logs`, whose policy lets CloudWatch Logs use it for
   * the account's log groups); CloudWatch Logs' own encryption without one.
   */
  readonly encryptionKey?: IKey;
  /**
   * Kept when the stack is deleted (production: what the functions did is evidence after the stack is gone); deleted
   * with it otherwise.
   */
  readonly retain?: boolean;
}

/** A log group's removal policy and key from how it is kept. */
export function keptAs(keeping: LogGroupKeeping = {}): Pick<LogGroupProps, 'removalPolicy' | 'encryptionKey'> {
  return {
    removalPolicy: keeping.retain === true ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    ...(keeping.encryptionKey ? { encryptionKey: keeping.encryptionKey } : {}),
  };
}

/**
 * The log group of one function of the stack. Logs are for operating the function: they age out after
 * `retention`, and outlive the stack only where `retain` says so (production).
 */
export function functionLogGroup(scope: Construct, id: string, options: FunctionLogOptions = {}): LogGroup {
  return new LogGroup(scope, id, { retention: options.retention ?? DEFAULT_LOG_RETENTION, ...keptAs(options) });
}

/**
 * Every controller function: Node 24 on arm64, a minified ESM bundle (`function-bundle.ts`: the handler's module plus
 * chunks loaded when an operation needs them; the AWS SDK is the runtime's), source maps, JSON logs in its own log
 * group, X-Ray tracing, and a role that may write that log group and send traces until granted more.
 *
 * Controller functions are invoked synchronously (by API Gateway, the integrity state machine, or the custom resource
 * provider that waits for the answer): the caller gets every error, so there is no asynchronous event for a
 * dead-letter queue to keep. A function also invoked asynchronously says why it needs none
 * (`asynchronousWithoutDeadLetterQueue`).
 */
export class ControllerFunction extends NodejsFunction {
  /**
   * The `live` alias of the function's current version: what API Gateway, the state machine, the custom resource and
   * the schedules invoke. Each deploy that changes the code or configuration publishes a version and moves the alias
   * to it; earlier versions are kept, so the alias can be moved back (docs/aws-operations.md, "Upgrades and rollback").
   */
  readonly live: Alias;

  constructor(scope: Construct, id: string, props: ControllerFunctionProps) {
    const logGroup = functionLogGroup(scope, `${id}Logs`, props.logs);
    const role = new FunctionRole(scope, `${id}Role`, {
      logGroup,
      description: `${props.description} (execution role)`,
    });

    super(scope, id, {
      code: prebuiltCode(props.source) ?? bundledFunctionCode(props.source, buildStampDefine(props.buildStamp)),
      handler: 'index.handler',
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? functionMemoryMb(props.source),
      timeout: props.timeout ?? FUNCTION_TIMEOUT,
      environment: { NODE_OPTIONS: '--enable-source-maps', ...powertoolsEnvironment(scope), ...props.environment },
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: APPLICATION_LOG_LEVEL,
      systemLogLevelV2: SYSTEM_LOG_LEVEL,
      logGroup,
      role,
      tracing: Tracing.ACTIVE,
      ...(props.reservedConcurrentExecutions !== undefined
        ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions }
        : {}),
      // Kept when a later deploy publishes the next one, so that a rollback can move the alias back to it.
      currentVersionOptions: { removalPolicy: RemovalPolicy.RETAIN },
    });
    this.live = new Alias(this, 'Live', { aliasName: LIVE_ALIAS, version: this.currentVersion });

    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Active tracing grants xray:PutTraceSegments and xray:PutTelemetryRecords, which take no resource ARN. ' +
        'A CDK test fails on any other action granted on `*`, so this cannot hide a later grant.',
    });
    Validations.of(this).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        props.asynchronousWithoutDeadLetterQueue ??
        "Invoked synchronously only (API Gateway's proxy integration, the integrity state machine's Lambda task, the " +
          'custom resource provider): the caller gets every error and nothing is retried asynchronously, so a ' +
          'dead-letter queue would never receive an event.',
    });
  }
}
