import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { API_BASE_PATHS, type OperationGroup, type Route } from '#shared/routes/route.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import { ControllerApi } from './controller-api.ts';
import { ControllerBootstrap } from './controller-bootstrap.ts';
import { ControllerFirewall } from './controller-firewall.ts';
import { ControllerFunction } from './controller-function.ts';
import { ControllerIntegrity } from './controller-integrity.ts';
import { ControllerKeys, SECRET_GROUPS, SIGNING_GROUPS } from './controller-keys.ts';
import { ControllerMtlsDomain } from './controller-mtls-domain.ts';
import { type ApiLimits, type ControllerSettings, DEFAULT_API_LIMITS } from './controller-settings.ts';
import { ControllerTable } from './controller-table.ts';
import { functionIdOf, operationGroupsOf } from './operation-groups.ts';

/** The API limits default to {@link DEFAULT_API_LIMITS}. */
export interface ControllerStackProps
  extends StackProps,
    Omit<ControllerSettings, keyof ApiLimits>,
    Partial<ApiLimits> {
  /** The routes served; the route table unless a test asks what a different set would synthesise to. */
  readonly routes?: readonly Route[];
}

/**
 * The whole controller: one table, one function per operation group of the route table, one REST API behind a web
 * ACL.
 */
export class ControllerStack extends Stack {
  readonly table: ControllerTable;
  readonly functions: ReadonlyMap<OperationGroup, ControllerFunction>;
  readonly api: ControllerApi;
  readonly firewall: ControllerFirewall;
  readonly bootstrap: ControllerBootstrap;
  readonly keys: ControllerKeys;
  readonly integrity?: ControllerIntegrity;
  readonly mtls: ControllerMtlsDomain;

  constructor(scope: Construct, id: string, props: ControllerStackProps) {
    super(scope, id, props);

    this.table = new ControllerTable(this, 'Table');

    // PKI: the network root CA, signing CA and enrollment JWT keys, usable only by the groups that sign with them.
    this.keys = new ControllerKeys(this, 'Keys');

    const routes = props.routes ?? ROUTES;
    const functions = new Map<OperationGroup, ControllerFunction>();
    for (const group of operationGroupsOf(routes)) {
      const fn = new ControllerFunction(this, functionIdOf(group), {
        source: group,
        description: `Ziti controller: ${group} operations`,
        environment: {
          TABLE_NAME: this.table.tableName,
          API_SESSION_TIMEOUT_MINUTES: String(props.apiSessionTimeoutMinutes),
          JWKS_ALLOW_PRIVATE_IPS: String(props.jwksAllowPrivateAddresses === true),
        },
      });
      // The whole table for every group: each one reads and touches the caller's API session, and entities, links
      // and unique-value markers share the table's key space, so per-group key conditions would not narrow much.
      this.table.grantReadWriteData(fn);
      const keyEnvironment = {
        ...this.keys.grantSigning(fn.role!, SIGNING_GROUPS[group] ?? []),
        ...(SECRET_GROUPS.includes(group) ? this.keys.grantSecrets(fn.role!) : {}),
      };
      for (const [name, value] of Object.entries(keyEnvironment)) fn.addEnvironment(name, value);
      functions.set(group, fn);
    }
    this.functions = functions;

    // Integrity scan: the Step Functions state machine and its segment function; the database group starts it.
    const databaseFunction = functions.get('database');
    if (databaseFunction) {
      this.integrity = new ControllerIntegrity(this, 'Integrity', {
        table: this.table,
        tableName: this.table.tableName,
        databaseFunction,
      });
    }

    this.api = new ControllerApi(this, 'Api', {
      routes,
      functions,
      throttling: {
        rateLimit: props.apiRateLimit ?? DEFAULT_API_LIMITS.apiRateLimit,
        burstLimit: props.apiBurstLimit ?? DEFAULT_API_LIMITS.apiBurstLimit,
      },
    });
    this.firewall = new ControllerFirewall(this, 'Firewall', {
      stage: this.api.restApi.deploymentStage,
      rateLimit: props.firewallRateLimit ?? DEFAULT_API_LIMITS.firewallRateLimit,
    });
    this.bootstrap = new ControllerBootstrap(this, 'Bootstrap', {
      table: this.table,
      adminUsername: props.adminUsername,
      keys: this.keys,
    });

    this.mtls = new ControllerMtlsDomain(this, 'Mtls', {
      restApi: this.api.restApi,
      bootstrap: this.bootstrap,
      ...(functions.get('pki') ? { pkiFunction: functions.get('pki')! } : {}),
      ...(props.mtlsDomainName && props.mtlsCertificateArn
        ? { domain: { name: props.mtlsDomainName, certificateArn: props.mtlsCertificateArn } }
        : {}),
    });

    new CfnOutput(this, 'ClientApiUrl', {
      description: 'Base URL of the Edge client API',
      value: this.api.restApi.urlForPath(API_BASE_PATHS.client),
    });
    new CfnOutput(this, 'ManagementApiUrl', {
      description: 'Base URL of the Edge management API',
      value: this.api.restApi.urlForPath(API_BASE_PATHS.management),
    });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'AdminUsername', { value: props.adminUsername });
    new CfnOutput(this, 'AdminPasswordSecretArn', {
      description: "Secrets Manager secret holding the default admin's password",
      value: this.bootstrap.adminPasswordSecret.secretArn,
    });
  }
}
