import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Architecture, LoggingFormat, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { FunctionRole } from './function-role.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The API's deadline: the reference controller answers 503 `TIMEOUT` after 10 s, so API Gateway does too. */
export const REQUEST_DEADLINE = Duration.seconds(10);

/**
 * A Lambda timeout past the API deadline, so that API Gateway's integration timeout (503 `TIMEOUT`) answers a slow
 * request rather than a killed function (which API Gateway reports as a 5xx integration failure).
 */
const FUNCTION_TIMEOUT = REQUEST_DEADLINE.plus(Duration.seconds(2));

/**
 * ESM bundles still hold CommonJS dependencies that call `require`; ESM has none, so define one. The alias keeps
 * the banner's import from clashing with a bundled `createRequire`.
 */
export const REQUIRE_BANNER =
  "import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);";

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
}

/**
 * The log group of one function of the stack. Logs are for operating the function, not an audit trail: they go with
 * the stack, and age out before that.
 */
export function functionLogGroup(scope: Construct, id: string): LogGroup {
  return new LogGroup(scope, id, { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
}

/**
 * Every controller function: Node 24 on arm64, one minified ESM bundle with everything inside (the AWS SDK too, so a
 * runtime SDK update never changes behaviour), source maps, JSON logs in its own log group, X-Ray tracing, and a role
 * that may write that log group and send traces until granted more.
 *
 * Controller functions are invoked synchronously (by API Gateway, or by the custom resource provider that waits for the
 * answer): the caller gets every error, so there is no asynchronous event for a dead-letter queue to keep. A function
 * also invoked asynchronously says why it needs none (`asynchronousWithoutDeadLetterQueue`).
 */
export class ControllerFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: ControllerFunctionProps) {
    const logGroup = functionLogGroup(scope, `${id}Logs`);
    const role = new FunctionRole(scope, `${id}Role`, {
      logGroup,
      description: `${props.description} (execution role)`,
    });

    super(scope, id, {
      entry: join(REPO_ROOT, 'functions', props.source, 'handler.ts'),
      handler: 'handler',
      projectRoot: REPO_ROOT,
      depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: 1024,
      timeout: props.timeout ?? FUNCTION_TIMEOUT,
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
      loggingFormat: LoggingFormat.JSON,
      logGroup,
      role,
      tracing: Tracing.ACTIVE,
      bundling: {
        format: OutputFormat.ESM,
        target: 'node24',
        mainFields: ['module', 'main'],
        banner: REQUIRE_BANNER,
        externalModules: [],
        minify: true,
        // Minified class names would make logged error names and `constructor.name` checks useless.
        keepNames: true,
        sourceMap: true,
        // Stack traces need only the mappings; the sources would double the upload for nothing.
        sourcesContent: false,
        tsconfig: join(REPO_ROOT, 'tsconfig.json'),
      },
    });

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
        'Invoked synchronously only (API Gateway proxy integration, custom resource provider): the caller gets ' +
          'every error and nothing is retried asynchronously, so a dead-letter queue would never receive an event.',
    });
  }
}
