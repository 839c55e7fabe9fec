import { CustomResource, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Certificate, type ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnRotationSchedule, type CfnSecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { SERVER_CERTIFICATE_TAG_KEY } from '#shared/pki/certificate-importer.ts';
import type { BuildStamp } from './build-stamp.ts';
import { ControllerFunction, type FunctionLogOptions, functionLogGroup } from './controller-function.ts';
import { BOOTSTRAP_KEYS, type ControllerKeys } from './controller-keys.ts';
import { grantTableData } from './controller-table.ts';
import { FunctionRole } from './function-role.ts';
import { tableActionsOf } from './operation-groups.ts';

/** What the daily schedule sends the bootstrap function (`functions/bootstrap/handler.ts`). */
export const RENEW_SERVER_CERTIFICATE_EVENT = { renewServerCertificate: true } as const;

export interface ControllerBootstrapProps {
  readonly table: ITable;
  readonly adminUsername: string;
  readonly buildStamp: BuildStamp;
  /**
   * What makes every deploy run the bootstrap: CloudFormation calls a custom resource only when its properties
   * change, so this changes with each synth (the time of the synth, by default).
   */
  readonly deployId?: string;
  /**
   * Rotate the admin password secret every this many days. Unset: it rotates only when asked
   * (`aws secretsmanager rotate-secret`).
   */
  readonly adminPasswordRotationDays?: number;
  readonly memorySize?: number;
  /** How the functions' log groups are kept. */
  readonly logs?: FunctionLogOptions;
  /** The PKI keys: the bootstrap builds the network CA with the root and signing CA keys. */
  readonly keys: ControllerKeys;
  /**
   * The custom domain names (the plain domain first): the bootstrap issues the server certificate for them, imports it
   * into ACM on every deploy and, on a daily schedule, renews and re-imports it when due. None: no certificate import.
   */
  readonly serverNames?: readonly string[];
}

/**
 * Seeds the table on every deploy (the default admin identity and whatever else a network needs, idempotently, so
 * what a newer build adds lands on upgrade) through a custom resource whose handler is
 * `functions/bootstrap/handler.ts`. The admin's password is generated into Secrets Manager, never into the template,
 * and the same function rotates it (Secrets Manager's rotation: a new password in the secret and on the admin, the
 * old one dead). With custom domains, it also imports the server certificate into ACM (answering its ARN,
 * {@link serverCertificate}) and renews it every day.
 */
export class ControllerBootstrap extends Construct {
  readonly adminPasswordSecret: Secret;
  /** The bootstrap function and its run on each deploy: what must come after it depends on `run`. */
  readonly function: ControllerFunction;
  readonly run: CustomResource;
  /** The server certificate in ACM, as the run answers it; only with server names. */
  readonly serverCertificate?: ICertificate;
  /** The daily renewal of the server certificate; only with server names. */
  readonly renewal?: Rule;
  /** The rotation of the admin password secret by the bootstrap function. */
  readonly adminPasswordRotation: CfnRotationSchedule;

  constructor(scope: Construct, id: string, props: ControllerBootstrapProps) {
    super(scope, id);

    // Retained with the table: the admin's password hash outlives the stack, so the password must too.
    this.adminPasswordSecret = new Secret(this, 'AdminPassword', {
      description: "Password of the controller's default admin identity",
      generateSecretString: { passwordLength: 32, excludeCharacters: '"\'`\\' },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // Under the controller's own key rather than Secrets Manager's AWS-managed one, which every principal of the account
    // with the secret's permissions may use. Set on the resource itself: given to the L2 secret, the key would get a
    // policy statement letting the whole account create grants on it through Secrets Manager.
    (this.adminPasswordSecret.node.defaultChild as CfnSecret).kmsKeyId = props.keys.adminPasswordEncryption.keyArn;

    const serverNames = props.serverNames ?? [];
    const certificateTag = Stack.of(this).stackName;
    const handler = new ControllerFunction(this, 'Function', {
      source: 'bootstrap',
      description: 'Ziti controller: seeds the table on deploy',
      // Hashing the admin password (argon2id) and a first write to a cold table take longer than a request may.
      timeout: Duration.minutes(1),
      environment: {
        TABLE_NAME: props.table.tableName,
        ADMIN_USERNAME: props.adminUsername,
        ADMIN_PASSWORD_SECRET_ARN: this.adminPasswordSecret.secretArn,
        ...(serverNames.length > 0
          ? { SERVER_NAMES: serverNames.join(','), SERVER_CERTIFICATE_TAG: certificateTag }
          : {}),
      },
      asynchronousWithoutDeadLetterQueue:
        'Besides the custom resource provider, which waits for the answer, it is invoked by Secrets Manager for each ' +
        'step of a rotation of the admin password, which checks each step and retries a failed rotation itself' +
        (serverNames.length > 0
          ? ", and asynchronously by the daily certificate renewal, whose event carries nothing to replay: a failed run is retried by Lambda, then by the next day's run, and the certificate is renewed 30 days before it expires."
          : '.'),
      buildStamp: props.buildStamp,
      ...(props.memorySize ? { memorySize: props.memorySize } : {}),
      ...(props.logs ? { logs: props.logs } : {}),
    });
    grantTableData(props.table, handler, tableActionsOf('bootstrap'));
    for (const [name, value] of Object.entries(props.keys.grantSigning(handler.role!, BOOTSTRAP_KEYS, true))) {
      handler.addEnvironment(name, value);
    }
    this.adminPasswordSecret.grantRead(handler);
    props.keys.grantAdminPassword(handler.role!);

    this.adminPasswordRotation = this.rotateAdminPassword(handler, props.adminPasswordRotationDays);

    const providerLogs = functionLogGroup(this, 'ProviderLogs', props.logs);
    const providerRole = new FunctionRole(this, 'ProviderRole', {
      logGroup: providerLogs,
      description: 'Ziti controller: custom resource provider of the bootstrap (execution role)',
    });
    const provider = new Provider(this, 'Provider', {
      onEventHandler: handler.live,
      logGroup: providerLogs,
      frameworkOnEventRole: providerRole,
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
      properties: {
        // Every deploy runs the bootstrap: seeds a newer build adds land on upgrade, and a changed adminUsername is
        // refused with the reason rather than ignored (docs/aws-operations.md, "Upgrades and rollback").
        deployId: props.deployId ?? new Date().toISOString(),
        revision: props.buildStamp.revision,
        adminUsername: props.adminUsername,
        // A change of names must run the bootstrap, which issues and imports a certificate naming them.
        ...(serverNames.length > 0 ? { serverNames: serverNames.join(',') } : {}),
      },
    });

    if (serverNames.length > 0) {
      this.grantCertificateImport(handler, certificateTag);
      this.serverCertificate = Certificate.fromCertificateArn(
        this,
        'ServerCertificate',
        this.run.getAttString('ServerCertificateArn'),
      );
      this.renewal = new Rule(this, 'RenewServerCertificate', {
        description: 'Ziti controller: renews the server certificate when due and imports it into ACM (daily)',
        schedule: Schedule.rate(Duration.days(1)),
        targets: [
          new LambdaFunction(handler.live, { event: RuleTargetInput.fromObject(RENEW_SERVER_CERTIFICATE_EVENT) }),
        ],
      });
      Validations.of(this.renewal).acknowledge({
        id: 'Serverless-EventBusDLQ',
        reason:
          'The daily renewal event carries nothing but the request to renew: an undelivered one needs no replay, ' +
          "as the next day's event does the same, and the certificate is renewed 30 days before it expires.",
      });
    }
  }

  /**
   * Makes the bootstrap function the admin password secret's rotation function: a new password is written to the
   * secret as pending, set on the default admin, tested, then made current (`functions/bootstrap/rotation.ts`).
   * Written as the L1 resource: the L2 rotation schedule also grants `secretsmanager:GetRandomPassword` on `*`, which
   * the function does not need (it generates the password itself).
   */
  private rotateAdminPassword(handler: ControllerFunction, days: number | undefined): CfnRotationSchedule {
    const secret = this.adminPasswordSecret;
    handler.live.addPermission('SecretsManagerRotation', {
      principal: new ServicePrincipal('secretsmanager.amazonaws.com'),
      sourceAccount: Stack.of(this).account,
    });
    handler.addToRolePolicy(
      new PolicyStatement({
        sid: 'RotateAdminPassword',
        actions: [
          'secretsmanager:DescribeSecret',
          'secretsmanager:GetSecretValue',
          'secretsmanager:PutSecretValue',
          'secretsmanager:UpdateSecretVersionStage',
        ],
        resources: [secret.secretArn],
      }),
    );
    const rotation = new CfnRotationSchedule(this, 'AdminPasswordRotation', {
      secretId: secret.secretArn,
      rotationLambdaArn: handler.live.functionArn,
      // The first deploy creates the admin after this resource may exist: a rotation now would find no admin.
      rotateImmediatelyOnUpdate: false,
      ...(days !== undefined ? { rotationRules: { scheduleExpression: `rate(${days} days)` } } : {}),
    });
    // Secrets Manager checks that it may invoke the function when the schedule is made.
    rotation.node.addDependency(handler.live.node.findChild('SecretsManagerRotation'));
    if (days === undefined) {
      Validations.of(secret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason:
          'Rotation is configured (the bootstrap function sets the new password on the default admin, the old one ' +
          'dies) but runs when the operator asks (`aws secretsmanager rotate-secret`), not on a schedule: the ' +
          "default admin is the operator's break-glass login, and a password changing under them unannounced locks " +
          'them out of the console mid-task. `adminPasswordRotationDays` schedules it.',
      });
    }
    return rotation;
  }

  /**
   * Lets the bootstrap import certificates into ACM tagged `ziti-controller=<stack name>` and re-import only into
   * certificates carrying that tag. A new certificate's ARN is unknown until ACM answers the import, so the resource is
   * every certificate of the account and region and the tag does the narrowing.
   */
  private grantCertificateImport(handler: ControllerFunction, tagValue: string): void {
    const stack = Stack.of(this);
    const certificates = `arn:${stack.partition}:acm:${stack.region}:${stack.account}:certificate/*`;
    handler.addToRolePolicy(
      new PolicyStatement({
        sid: 'ImportTaggedServerCertificate',
        actions: ['acm:ImportCertificate', 'acm:AddTagsToCertificate'],
        resources: [certificates],
        conditions: {
          StringEquals: { [`aws:RequestTag/${SERVER_CERTIFICATE_TAG_KEY}`]: tagValue },
          'ForAllValues:StringEquals': { 'aws:TagKeys': [SERVER_CERTIFICATE_TAG_KEY] },
        },
      }),
    );
    handler.addToRolePolicy(
      new PolicyStatement({
        sid: 'ReimportOwnServerCertificate',
        actions: ['acm:ImportCertificate'],
        resources: [certificates],
        conditions: { StringEquals: { [`aws:ResourceTag/${SERVER_CERTIFICATE_TAG_KEY}`]: tagValue } },
      }),
    );
    Validations.of(handler.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:acm:<AWS::Region>:<AWS::AccountId>:certificate/*]`,
      reason:
        "A new certificate's ARN is unknown until ACM answers the import. The statements are narrowed by tag: a new " +
        "import must be tagged with this stack's name, and a re-import only goes into a certificate carrying it.",
    });
  }
}
