import { CfnOutput, Tags } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { ARecord, HostedZone, type IHostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { LoadBalancerTarget } from 'aws-cdk-lib/aws-route53-targets';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { API_BASE_PATHS, type OperationGroup, type Route } from '#shared/routes/route.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import { type BuildStamp, currentBuildStamp } from './build-stamp.ts';
import { ControllerApi } from './controller-api.ts';
import { ControllerBootstrap } from './controller-bootstrap.ts';
import { ControllerDomain } from './controller-domain.ts';
import { ControllerFirewall } from './controller-firewall.ts';
import { ControllerFunction, type FunctionLogOptions, type LogGroupKeeping } from './controller-function.ts';
import { ControllerIntegrity } from './controller-integrity.ts';
import { ControllerKeys, SECRET_GROUPS, SIGNING_GROUPS } from './controller-keys.ts';
import { ControllerLoadBalancer, clientCertificateHeaderName } from './controller-load-balancer.ts';
import { ControllerMonitoring, type MonitoredFunction } from './controller-monitoring.ts';
import { ControllerMtlsDomain } from './controller-mtls-domain.ts';
import { ControllerRouterEndpoint } from './controller-router-endpoint.ts';
import { ControllerSessionSweep } from './controller-session-sweep.ts';
import {
  type ApiLimits,
  type ControllerSettings,
  DEFAULT_API_LIMITS,
  DEFAULT_ENVIRONMENT,
  DEFAULT_REQUEST_LOG_SAMPLE_RATE,
  domainSettingsProblem,
  isProduction,
  settingsProblem,
} from './controller-settings.ts';
import { controllerTable, grantTableData } from './controller-table.ts';
import { DEFAULT_FRONT_DOOR, frontDoorEnvironment, frontDoorProblem } from './front-door.ts';
import { loginThrottling } from './login-throttling.ts';
import { functionIdOf, operationGroupsOf, tableActionsOf } from './operation-groups.ts';
import { publicVpc } from './public-vpc.ts';
import { routerEndpointProblem, routerEndpointSizingOf } from './router-endpoint-settings.ts';
import { tableCapacityOf, tableCapacityProblem } from './table-capacity.ts';

/** The tag keys every resource carries. */
export const TAG_KEYS = { environment: 'ziti:environment', version: 'ziti:version' } as const;

/**
 * What a deployment of the controller is made of: {@link ControllerSettings} (every one optional here, with the
 * defaults of docs/aws.md's settings table), and what only code can give.
 */
export interface ZitiControllerProps extends Partial<Omit<ControllerSettings, keyof ApiLimits>>, Partial<ApiLimits> {
  /** Where the alarms go: an existing topic (a team's paging topic); else the controller makes one. */
  readonly alarmTopic?: ITopic;
  /**
   * The version, revision and date the functions report (`/version`) and the resources are tagged with; by default the
   * construct package's own, or this repository's (its `package.json` version and git commit).
   */
  readonly buildStamp?: BuildStamp;
  /** What makes each deploy run the bootstrap; the time of the synth by default. */
  readonly deployId?: string;
  /** The routes served; the route table unless a test asks what a different set would synthesise to. */
  readonly routes?: readonly Route[];
  /**
   * An existing VPC for the load balancer (`frontDoor: 'load-balancer'`) and the routers' endpoint, with `vpcSubnets`
   * its public subnets in two zones or more; unset, the controller makes one VPC of two public subnets for both.
   */
  readonly vpc?: IVpc;
  readonly vpcSubnets?: SubnetSelection;
}

/**
 * The whole controller as one construct: one table (or an existing one, `tableName`), one function per operation
 * group of the route table behind its `live` alias, one front door behind a web ACL (the REST API, or with
 * `frontDoor: 'load-balancer'` an Application Load Balancer), the PKI keys, the bootstrap, the integrity run and the
 * ended sessions' sweep, the alarms and dashboard, and with `domainName` (and for the REST API `mtlsDomainName`,
 * `sdkDomainName`) the custom domains serving the controller's server certificate. One per stack: its names derive
 * from the stack's.
 */
export class ZitiController extends Construct {
  readonly environment: string;
  readonly buildStamp: BuildStamp;
  readonly table: ITable;
  readonly functions: ReadonlyMap<OperationGroup, ControllerFunction>;
  /** The REST API; absent with the load balancer front door. */
  readonly api?: ControllerApi;
  /** The load balancer; only with `frontDoor: 'load-balancer'`. */
  readonly loadBalancer?: ControllerLoadBalancer;
  /** The web ACL; absent with `firewall: false`. */
  readonly firewall?: ControllerFirewall;
  readonly bootstrap: ControllerBootstrap;
  readonly keys: ControllerKeys;
  readonly integrity?: ControllerIntegrity;
  /** The ended sessions' sweep: a function run every minute. */
  readonly sessionSweep: ControllerSessionSweep;
  /** The truststore and the mTLS domain of the REST API; absent with the load balancer, which passes chains through. */
  readonly mtls?: ControllerMtlsDomain;
  readonly domain?: ControllerDomain;
  /** The SDKs' front door (`sdkDomainName`). */
  readonly sdkDomain?: ControllerDomain;
  readonly monitoring: ControllerMonitoring;
  /** The routers' control channel endpoint (`routerEndpoint: true`). */
  readonly routerEndpoint?: ControllerRouterEndpoint;

  constructor(scope: Construct, id: string, props: ZitiControllerProps = {}) {
    super(scope, id);
    const problem =
      domainSettingsProblem(props) ??
      settingsProblem(props) ??
      frontDoorProblem(props) ??
      tableCapacityProblem(props) ??
      routerEndpointProblem(props);
    if (problem) throw new Error(problem);
    const frontDoor = props.frontDoor ?? DEFAULT_FRONT_DOOR;
    const needsVpc = frontDoor === 'load-balancer' || props.routerEndpoint === true;
    // The construct's own props, held to what existingVpcProblem holds the app's `vpcId` to: nothing taken and ignored.
    if (!needsVpc && (props.vpc || props.vpcSubnets)) {
      throw new Error('vpc and vpcSubnets are for frontDoor load-balancer or routerEndpoint: true');
    }
    const { domainName, mtlsDomainName, sdkDomainName } = props;
    const adminUsername = props.adminUsername ?? 'admin';
    const memorySize = props.memorySize;
    this.environment = props.environment ?? DEFAULT_ENVIRONMENT;
    this.buildStamp = props.buildStamp ?? currentBuildStamp();
    Tags.of(this).add(TAG_KEYS.environment, this.environment);
    Tags.of(this).add(TAG_KEYS.version, this.buildStamp.version);

    this.table = controllerTable(this, 'Table', props.tableName, tableCapacityOf(props));

    // PKI: the network root CA, signing CA and enrollment JWT keys, usable only by the groups that sign with them.
    this.keys = new ControllerKeys(this, 'Keys');
    // Every log group (the functions', the state machine's, the access log, the firewall's): encrypted under the
    // stack's logs key, and kept past the stack in production. Elsewhere they go with it: a kept firewall log, whose
    // name is the stack's, would stop a stack of the same name from being deployed again.
    const keeping: LogGroupKeeping = { encryptionKey: this.keys.logs, retain: isProduction(this.environment) };
    const logs: FunctionLogOptions = {
      ...(props.logRetentionDays ? { retention: props.logRetentionDays } : {}),
      ...keeping,
    };

    const routes = props.routes ?? ROUTES;
    // Behind the load balancer, the one header a client certificate is read from: the listener's and the functions'.
    const clientCertificateHeader = frontDoor === 'load-balancer' ? clientCertificateHeaderName() : undefined;
    const functions = new Map<OperationGroup, ControllerFunction>();
    for (const group of operationGroupsOf(routes)) {
      const fn = new ControllerFunction(this, functionIdOf(group), {
        source: group,
        description: `Ziti controller: ${group} operations`,
        buildStamp: this.buildStamp,
        ...(memorySize ? { memorySize } : {}),
        logs,
        environment: {
          TABLE_NAME: this.table.tableName,
          API_SESSION_TIMEOUT_MINUTES: String(props.apiSessionTimeoutMinutes ?? 30),
          JWKS_ALLOW_PRIVATE_IPS: String(props.jwksAllowPrivateAddresses === true),
          // The OIDC provider is served either way; OIDC_AUTH only makes `/version` offer it (shared/config.ts).
          OIDC_AUTH: String(props.oidcAuth === true),
          OIDC_ACCESS_TOKEN_SECONDS: String(props.oidcAccessTokenSeconds ?? 1800),
          OIDC_REFRESH_TOKEN_SECONDS: String(props.oidcRefreshTokenSeconds ?? 86_400),
          REQUEST_LOG_SAMPLE_RATE: String(props.requestLogSampleRate ?? DEFAULT_REQUEST_LOG_SAMPLE_RATE),
          // Which events arrive (API Gateway's or the load balancer's), and where a client certificate is read from.
          ...frontDoorEnvironment(frontDoor),
          ...(clientCertificateHeader ? { ALB_CLIENT_CERT_HEADER: clientCertificateHeader } : {}),
          // Links and enrollment JWT issuers name the custom domain, whichever host a request came through.
          ...(domainName ? { PUBLIC_BASE_URL: `https://${domainName}` } : {}),
          // Where requests needing a client certificate are sent, and the SDKs' front door (`ziti-ctrl-address`).
          ...(mtlsDomainName ? { MTLS_BASE_URL: `https://${mtlsDomainName}` } : {}),
          ...(sdkDomainName ? { SDK_BASE_URL: `https://${sdkDomainName}` } : {}),
        },
      });
      // The whole table for every group: each one reads and touches the caller's API session, and entities, links
      // and unique-value markers share the table's key space, so per-group key conditions would not narrow much. The
      // actions are the ones its operations send (no whole-table scan).
      grantTableData(this.table, fn, tableActionsOf(group));
      const keyEnvironment = {
        ...this.keys.grantSigning(fn.role!, SIGNING_GROUPS[group] ?? []),
        ...(SECRET_GROUPS.includes(group) ? this.keys.grantSecrets(fn.role!) : {}),
      };
      for (const [name, value] of Object.entries(keyEnvironment)) fn.addEnvironment(name, value);
      functions.set(group, fn);
    }
    this.functions = functions;

    // One VPC for both load balancers when the deployment gives none: made only when one of them is deployed.
    const vpc = props.vpc ?? (needsVpc ? publicVpc(this) : undefined);
    if (props.routerEndpoint === true) {
      this.routerEndpoint = new ControllerRouterEndpoint(this, 'RouterEndpoint', {
        table: this.table,
        keys: this.keys,
        sizing: routerEndpointSizingOf(props),
        ...(props.ctrlDomainName ? { ctrlDomainName: props.ctrlDomainName } : {}),
        buildStamp: this.buildStamp,
        logs,
        deletionProtection: isProduction(this.environment),
        vpc: vpc!,
        ...(props.vpcSubnets ? { vpcSubnets: props.vpcSubnets } : {}),
      });
      // Router enrollment JWTs' `ctrls` and `GET /controllers` name where routers dial.
      for (const fn of functions.values()) fn.addEnvironment('CTRL_ADDRESS', this.routerEndpoint.ctrlAddress);
    }

    // Integrity scan: the Step Functions state machine and its segment function; the database group starts it.
    const databaseFunction = functions.get('database');
    if (databaseFunction) {
      this.integrity = new ControllerIntegrity(this, 'Integrity', {
        table: this.table,
        tableName: this.table.tableName,
        databaseFunction,
        buildStamp: this.buildStamp,
        ...(memorySize ? { memorySize } : {}),
        logs,
      });
    }
    // The ended sessions' sweep: what changes that end sessions leave in the table, removed every minute.
    this.sessionSweep = new ControllerSessionSweep(this, 'SessionSweep', {
      table: this.table,
      buildStamp: this.buildStamp,
      ...(memorySize ? { memorySize } : {}),
      logs,
    });

    const aliases = new Map([...functions].map(([group, fn]) => [group, fn.live]));
    if (frontDoor === 'rest-api') {
      this.api = new ControllerApi(this, 'Api', {
        routes,
        functions: aliases,
        stageName: this.environment,
        accessLogKeeping: keeping,
        ...(props.apiGatewayCloudWatchRole ? { cloudWatchRole: true } : {}),
        ...(props.detailedMetrics ? { detailedMetrics: true } : {}),
        throttling: {
          rateLimit: props.apiRateLimit ?? DEFAULT_API_LIMITS.apiRateLimit,
          burstLimit: props.apiBurstLimit ?? DEFAULT_API_LIMITS.apiBurstLimit,
        },
        loginThrottling: loginThrottling(props),
      });
    }
    this.bootstrap = new ControllerBootstrap(this, 'Bootstrap', {
      table: this.table,
      adminUsername,
      keys: this.keys,
      buildStamp: this.buildStamp,
      // The routers' host too: a router checks the endpoint's certificate (the same one) names the host it dialled.
      serverNames: [domainName, mtlsDomainName, sdkDomainName, this.routerEndpoint?.host].filter(
        (name) => name !== undefined,
      ),
      ...(props.deployId ? { deployId: props.deployId } : {}),
      ...(props.adminPasswordRotationDays ? { adminPasswordRotationDays: props.adminPasswordRotationDays } : {}),
      ...(memorySize ? { memorySize } : {}),
      logs,
    });

    // The tasks serve the certificate the bootstrap issues and read the CA it builds: a first deploy's tasks would
    // otherwise start before either exists, fail, and roll the service back.
    this.routerEndpoint?.service.node.addDependency(this.bootstrap.run);

    const hostedZone: IHostedZone | undefined =
      props.hostedZoneId && props.hostedZoneName
        ? HostedZone.fromHostedZoneAttributes(this, 'HostedZone', {
            hostedZoneId: props.hostedZoneId,
            zoneName: props.hostedZoneName,
          })
        : undefined;
    const serverCertificate = this.bootstrap.serverCertificate;
    // frontDoorProblem has made sure of the domain name, so of the certificate issued for it.
    if (frontDoor === 'load-balancer' && domainName && serverCertificate) {
      this.loadBalancer = new ControllerLoadBalancer(this, 'LoadBalancer', {
        routes,
        functions: aliases,
        certificate: serverCertificate,
        domainName,
        deletionProtection: isProduction(this.environment),
        clientCertificateHeader: clientCertificateHeader!,
        vpc: vpc!,
        ...(props.vpcSubnets ? { vpcSubnets: props.vpcSubnets } : {}),
      });
    }
    if (this.loadBalancer && hostedZone && domainName) {
      // At the path of the REST API domain's alias record (`Domain/Alias`), so that its logical id is the same: a
      // change of front door updates the record in place rather than creating a second record of the same name,
      // which Route 53 refuses, before deleting the first.
      new ARecord(new Construct(this, 'Domain'), 'Alias', {
        zone: hostedZone,
        recordName: domainName,
        target: RecordTarget.fromAlias(new LoadBalancerTarget(this.loadBalancer.loadBalancer)),
      });
    }
    if (this.routerEndpoint && hostedZone && props.ctrlDomainName) {
      new ARecord(this.routerEndpoint, 'Alias', {
        zone: hostedZone,
        recordName: props.ctrlDomainName,
        target: RecordTarget.fromAlias(new LoadBalancerTarget(this.routerEndpoint.loadBalancer)),
      });
    }
    if (props.firewall !== false) {
      this.firewall = new ControllerFirewall(this, 'Firewall', {
        ...(this.api ? { stage: this.api.restApi.deploymentStage } : {}),
        ...(this.loadBalancer ? { loadBalancer: this.loadBalancer.loadBalancer } : {}),
        rateLimit: props.firewallRateLimit ?? DEFAULT_API_LIMITS.firewallRateLimit,
        logKeeping: keeping,
      });
    } else {
      this.api?.acknowledgeNoFirewall();
    }

    const api = this.api;
    if (api && domainName && serverCertificate) {
      this.domain = new ControllerDomain(this, 'Domain', {
        restApi: api.restApi,
        domainName,
        certificate: serverCertificate,
        ...(hostedZone ? { hostedZone } : {}),
      });
    }
    if (api && sdkDomainName && serverCertificate) {
      this.sdkDomain = new ControllerDomain(this, 'SdkDomain', {
        restApi: api.restApi,
        domainName: sdkDomainName,
        certificate: serverCertificate,
        outputPrefix: 'SdkDomain',
        ...(hostedZone ? { hostedZone } : {}),
      });
    }
    if (api) {
      this.mtls = new ControllerMtlsDomain(this, 'Mtls', {
        restApi: api.restApi,
        bootstrap: this.bootstrap,
        ...(props.truststoreTrail === false ? { trail: false } : {}),
        ...(functions.get('pki') ? { pkiFunction: functions.get('pki')! } : {}),
        ...(mtlsDomainName && serverCertificate
          ? {
              domain: {
                name: mtlsDomainName,
                certificate: serverCertificate,
                ...(props.mtlsOwnershipCertificateArn
                  ? { ownershipCertificateArn: props.mtlsOwnershipCertificateArn }
                  : {}),
                ...(hostedZone ? { hostedZone } : {}),
              },
            }
          : {}),
      });
    }
    const monitored: MonitoredFunction[] = [
      ...[...functions].map(([group, fn]) => ({
        name: group,
        function: fn,
        logGroup: fn.logGroup,
        usesKms: (SIGNING_GROUPS[group] ?? []).length > 0 || SECRET_GROUPS.includes(group),
      })),
      {
        name: 'bootstrap',
        function: this.bootstrap.function,
        logGroup: this.bootstrap.function.logGroup,
        usesKms: true,
      },
      ...(this.integrity
        ? [
            {
              name: 'integrity',
              function: this.integrity.function,
              logGroup: this.integrity.function.logGroup,
              usesKms: false,
            },
          ]
        : []),
      {
        name: 'session-sweep',
        function: this.sessionSweep.function,
        logGroup: this.sessionSweep.function.logGroup,
        usesKms: false,
        alarmOnThrottles: false,
      },
    ];
    this.monitoring = new ControllerMonitoring(this, 'Monitoring', {
      ...(this.api ? { stage: this.api.restApi.deploymentStage } : {}),
      ...(this.loadBalancer ? { loadBalancer: this.loadBalancer.loadBalancer } : {}),
      functions: monitored,
      table: this.table,
      ...(this.firewall ? { webAclMetricName: this.firewall.metricName } : {}),
      ...(this.integrity ? { integrityStateMachine: this.integrity.stateMachine } : {}),
      ...(this.routerEndpoint ? { routerEndpoint: this.routerEndpoint } : {}),
      ...(props.alarmTopic ? { topic: props.alarmTopic } : {}),
      ...(props.alarmEmail ? { email: props.alarmEmail } : {}),
    });

    // The load balancer answers only at the domain its certificate names.
    const urlOf = (basePath: string) =>
      this.api ? this.api.restApi.urlForPath(basePath) : `https://${domainName}${basePath}`;
    new CfnOutput(this, 'ClientApiUrl', {
      description: 'Base URL of the Edge client API',
      value: urlOf(API_BASE_PATHS.client),
    });
    new CfnOutput(this, 'ManagementApiUrl', {
      description: 'Base URL of the Edge management API',
      value: urlOf(API_BASE_PATHS.management),
    });
    new CfnOutput(this, 'FabricApiUrl', {
      description: "Base URL of the fabric API (read only, the management API's admin sessions)",
      value: urlOf(API_BASE_PATHS.fabric),
    });
    if (this.routerEndpoint) {
      new CfnOutput(this, 'RouterCtrlAddress', {
        description: "Where routers dial the control channel (router enrollment JWTs' ctrls)",
        value: this.routerEndpoint.ctrlAddress,
      });
    }
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'AdminUsername', { value: adminUsername });
    new CfnOutput(this, 'AdminPasswordSecretArn', {
      description: "Secrets Manager secret holding the default admin's password",
      value: this.bootstrap.adminPasswordSecret.secretArn,
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      description: 'SNS topic every alarm notifies: subscribe to it',
      value: this.monitoring.topic.topicArn,
    });
    new CfnOutput(this, 'Version', {
      description: 'The version, revision and build date the functions report (/version)',
      value: `${this.buildStamp.version} ${this.buildStamp.revision} ${this.buildStamp.buildDate}`,
    });
  }
}
