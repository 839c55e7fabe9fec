import { CustomResource, Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { ControllerFunction } from './controller-function.ts';

/**
 * Bump to make CloudFormation run the bootstrap again on the next deploy (it only runs when the custom resource's
 * properties change). The bootstrap is idempotent, so an extra run is harmless.
 */
export const BOOTSTRAP_VERSION = '1';

export interface ControllerBootstrapProps {
  readonly table: ITable;
  readonly adminUsername: string;
}

/**
 * Seeds the table on deploy (the default admin identity and whatever else a new network needs) through a custom
 * resource whose handler is `functions/bootstrap/handler.ts`. The admin's password is generated into Secrets
 * Manager, never into the template.
 */
export class ControllerBootstrap extends Construct {
  readonly adminPasswordSecret: Secret;

  constructor(scope: Construct, id: string, props: ControllerBootstrapProps) {
    super(scope, id);

    // Retained with the table: the admin's password hash outlives the stack, so the password must too.
    this.adminPasswordSecret = new Secret(this, 'AdminPassword', {
      description: "Password of the controller's default admin identity",
      generateSecretString: { passwordLength: 32, excludeCharacters: '"\'`\\' },
      removalPolicy: RemovalPolicy.RETAIN,
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
    this.adminPasswordSecret.grantRead(handler);

    const provider = new Provider(this, 'Provider', {
      onEventHandler: handler,
      logGroup: new LogGroup(this, 'ProviderLogs', {
        retention: RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
    });

    new CustomResource(this, 'Run', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::ControllerBootstrap',
      // A failing bootstrap should fail the deploy within minutes, not CloudFormation's default hour.
      serviceTimeout: Duration.minutes(5),
      properties: { bootstrapVersion: BOOTSTRAP_VERSION, adminUsername: props.adminUsername },
    });
  }
}
