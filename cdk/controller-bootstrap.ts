import { CustomResource, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { ControllerFunction, functionLogGroup } from './controller-function.ts';
import { BOOTSTRAP_KEYS, type ControllerKeys } from './controller-keys.ts';
import { FunctionRole } from './function-role.ts';
import { wildcardUnderArnFinding } from './wildcard-under-arn-finding.ts';

/**
 * Bump to make CloudFormation run the bootstrap again on the next deploy (it only runs when the custom resource's
 * properties change). The bootstrap is idempotent, so an extra run is harmless.
 */
export const BOOTSTRAP_VERSION = '2';

export interface ControllerBootstrapProps {
  readonly table: ITable;
  readonly adminUsername: string;
  /** The PKI keys: the bootstrap builds the network CA with the root and signing CA keys. */
  readonly keys: ControllerKeys;
}

/**
 * Seeds the table on deploy (the default admin identity and whatever else a new network needs) through a custom
 * resource whose handler is `functions/bootstrap/handler.ts`. The admin's password is generated into Secrets
 * Manager, never into the template.
 */
export class ControllerBootstrap extends Construct {
  readonly adminPasswordSecret: Secret;
  /** The bootstrap function and its run on each deploy: what must come after it depends on `run`. */
  readonly function: ControllerFunction;
  readonly run: CustomResource;

  constructor(scope: Construct, id: string, props: ControllerBootstrapProps) {
    super(scope, id);

    // Retained with the table: the admin's password hash outlives the stack, so the password must too.
    this.adminPasswordSecret = new Secret(this, 'AdminPassword', {
      description: "Password of the controller's default admin identity",
      generateSecretString: { passwordLength: 32, excludeCharacters: '"\'`\\' },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.adminPasswordSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        "The operator's bootstrap credential, generated once: the admin's password lives as an argon2id hash in the " +
        'table, so it is rotated by changing it through the API; a rotated secret would no longer match it.',
    });

    const handler = new ControllerFunction(this, 'Function', {
      source: 'bootstrap',
      description: 'Ziti controller: seeds the table on deploy',
      // Hashing the admin password (argon2id) and a first write to a cold table take longer than a request may.
      timeout: Duration.minutes(1),
      environment: {
        TABLE_NAME: props.table.tableName,
        ADMIN_USERNAME: props.adminUsername,
        ADMIN_PASSWORD_SECRET_ARN: this.adminPasswordSecret.secretArn,
      },
    });
    props.table.grantReadWriteData(handler);
    for (const [name, value] of Object.entries(props.keys.grantSigning(handler.role!, BOOTSTRAP_KEYS, true))) {
      handler.addEnvironment(name, value);
    }
    this.adminPasswordSecret.grantRead(handler);

    const providerLogs = functionLogGroup(this, 'ProviderLogs');
    const providerRole = new FunctionRole(this, 'ProviderRole', {
      logGroup: providerLogs,
      description: 'Ziti controller: custom resource provider of the bootstrap (execution role)',
    });
    const provider = new Provider(this, 'Provider', {
      onEventHandler: handler,
      logGroup: providerLogs,
      frameworkOnEventRole: providerRole,
    });
    Validations.of(providerRole).acknowledge({
      id: wildcardUnderArnFinding(handler.node.defaultChild as CfnFunction, ':*'),
      reason: "The provider may invoke the bootstrap function's versions and aliases; that function and no other.",
    });
    // Provider has no memory, tracing or dead-letter settings for the framework function it creates.
    Validations.of(provider).acknowledge(
      {
        id: 'Serverless-LambdaDefaultMemorySize',
        reason: "CDK's provider framework function, which only relays the event and the answer: 128 MB is plenty.",
      },
      {
        id: 'Serverless-LambdaTracing',
        reason: "CDK's provider framework function runs once per deploy; the bootstrap function it calls is traced.",
      },
      {
        id: 'Serverless-LambdaDLQ',
        reason:
          'CloudFormation waits for the answer and fails the deploy after the 5-minute service timeout; an event ' +
          'parked in a dead-letter queue could not be replayed into that deploy.',
      },
    );

    this.function = handler;
    this.run = new CustomResource(this, 'Run', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::ControllerBootstrap',
      // A failing bootstrap should fail the deploy within minutes, not CloudFormation's default hour.
      serviceTimeout: Duration.minutes(5),
      properties: { bootstrapVersion: BOOTSTRAP_VERSION, adminUsername: props.adminUsername },
    });
  }
}
