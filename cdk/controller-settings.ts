import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { existingVpcProblem, type FrontDoor, type FrontDoorSettings, frontDoorProblem } from './front-door.ts';
import { DEFAULT_FLEET_SIZE, type LoginThrottleSettings } from './login-throttling.ts';
import { type RouterEndpointSettings, routerEndpointProblem } from './router-endpoint-settings.ts';
import { type TableBillingMode, type TableCapacitySettings, tableCapacityProblem } from './table-capacity.ts';

/** How much traffic the API takes before it answers 429. */
export interface ApiLimits extends LoginThrottleSettings {
  /**
   * Requests per second each method of the stage serves in the long run, all clients together (API Gateway's stage
   * throttling, which applies to every method on its own).
   */
  readonly apiRateLimit: number;
  /** Requests each method serves at once above that rate, all clients together. */
  readonly apiBurstLimit: number;
  /** Requests one client IP may send in any five minutes (the web ACL's rate-based rule). */
  readonly firewallRateLimit: number;
  /** How many devices (identities and routers) the login paths' throttles are sized for (`loginThrottling`). */
  readonly fleetSize: number;
}

/**
 * Room for a large network's clients and routers, yet far below API Gateway's account-wide 10,000 requests per
 * second: a runaway script or a flood is cut off before it runs up the Lambda and DynamoDB bill.
 */
export const DEFAULT_API_LIMITS: ApiLimits = {
  apiRateLimit: 500,
  apiBurstLimit: 1000,
  firewallRateLimit: 5000,
  fleetSize: DEFAULT_FLEET_SIZE,
};

/** The environment a deployment is unless named: production. */
export const DEFAULT_ENVIRONMENT = 'prod';

/** Deploy-time settings of the controller. */
export interface ControllerSettings
  extends Partial<ApiLimits>,
    FrontDoorSettings,
    TableCapacitySettings,
    RouterEndpointSettings {
  /**
   * The environment this deployment is (`prod`, `staging`, `dev`…): the API's stage, the tag `ziti:environment` on
   * every resource, and in the app the stack's name (`ZitiController-<environment>`) and its termination protection
   * (on for `prod`).
   */
  readonly environment: string;
  /**
   * Name of the default admin identity the bootstrap creates on first deploy. A later deploy with another name fails
   * with the reason instead of leaving the admin as it is unnoticed (docs/aws-operations.md, "The admin password").
   */
  readonly adminUsername: string;
  /** API sessions end after this long without a request (the reference's `edge.api.sessionTimeout`). */
  readonly apiSessionTimeoutMinutes: number;
  /**
   * The plain API's custom domain (`ziti.example.com`): SDKs call root paths (`/edge/client/v1/...`, no stage name)
   * and enroll at the enrollment JWT's issuer, `https://<domainName>`. It serves the controller's server certificate,
   * which the bootstrap issues from the network CA and imports into ACM.
   */
  readonly domainName?: string;
  /**
   * The second custom domain, with mutual TLS (certificate logins and enrollment); it serves the same server
   * certificate. Without it the stack still keeps the truststore but makes no mTLS domain.
   */
  readonly mtlsDomainName?: string;
  /**
   * The SDKs' front door (`ziti-sdk.example.com`), with `mtlsDomainName`: a third custom domain, plain like
   * `domainName`, that one-time-token enrollment JWTs name. SDKs enroll there and its `GET /version` sends them on to
   * the mTLS domain, the one way the OpenZiti C SDK can be led there (docs/aws.md, "Three ways in").
   */
  readonly sdkDomainName?: string;
  /**
   * A public ACM certificate for `mtlsDomainName` (same region), which API Gateway asks for to verify ownership of an
   * mTLS domain serving an imported certificate. Not needed with a hosted zone: the stack then requests one itself.
   */
  readonly mtlsOwnershipCertificateArn?: string;
  /**
   * The Route 53 public hosted zone both domain names are in: the stack then makes their alias records and requests
   * (DNS-validated) the mTLS domain's ownership verification certificate.
   */
  readonly hostedZoneId?: string;
  readonly hostedZoneName?: string;
  /**
   * Whether external JWT signers' JWKS endpoints may be private addresses (an identity provider inside the VPC).
   * Off by default: a JWKS URL could otherwise reach the Lambda runtime API or the metadata service.
   */
  readonly jwksAllowPrivateAddresses?: boolean;
  /**
   * Whether `/version` offers the OIDC login (`OIDC_AUTH`), which makes SDKs switch to it by themselves. The provider
   * (`/oidc`) is served either way. Off by default.
   */
  readonly oidcAuth?: boolean;
  /** How long an OIDC access token (and ID token) is good for (`OIDC_ACCESS_TOKEN_SECONDS`); 1800 unless told. */
  readonly oidcAccessTokenSeconds?: number;
  /** How long an OIDC refresh token is good for (`OIDC_REFRESH_TOKEN_SECONDS`); 86400 unless told. */
  readonly oidcRefreshTokenSeconds?: number;
  /**
   * An existing table to use instead of creating one: a table restored from a point-in-time recovery or a backup
   * (docs/aws-operations.md, "Restoring the table"). The stack then neither manages nor deletes it.
   */
  readonly tableName?: string;
  /** An address the alarm topic e-mails (SNS asks it to confirm first). */
  readonly alarmEmail?: string;
  /** The web ACL in front of the API (on by default). Off only where another firewall fronts it. */
  readonly firewall?: boolean;
  /**
   * Set the account's API Gateway CloudWatch Logs role from this stack (off by default: it is one per account and
   * region, and stage logging only needs it set once, docs/aws.md).
   */
  readonly apiGatewayCloudWatchRole?: boolean;
  /** API Gateway's per-method metrics on the stage (off by default: hundreds of billed custom metrics). */
  readonly detailedMetrics?: boolean;
  /** Rotate the admin password secret every this many days; unset, it rotates only when asked. */
  readonly adminPasswordRotationDays?: number;
  /** Record the truststore's writes in a trail of the stack's own (on by default). */
  readonly truststoreTrail?: boolean;
  /** How long the functions' logs are kept (a CloudWatch Logs retention, in days); one month by default. */
  readonly logRetentionDays?: RetentionDays;
  /** Memory of each function in MB (128 to 10240); 1024 by default. */
  readonly memorySize?: number;
  /**
   * One successful read in this many gets its request summary line (`REQUEST_LOG_SAMPLE_RATE`); every failure, slow
   * request and write gets one whatever this says. {@link DEFAULT_REQUEST_LOG_SAMPLE_RATE} by default; 1 logs every
   * request.
   */
  readonly requestLogSampleRate?: number;
}

/**
 * One successful read in a hundred is logged: a fleet's polls are nearly all its requests, and their lines nearly all
 * its log bill (docs/performance.md, "A fleet's monthly bill"). That still leaves a 10,000-device fleet about a
 * hundred lines a minute to see its traffic by; failures, slow requests and writes are all kept, and the metrics
 * count every request apart.
 */
export const DEFAULT_REQUEST_LOG_SAMPLE_RATE = 100;

/** The rarest sampling of successful reads: one in a million. */
const MAX_REQUEST_LOG_SAMPLE_RATE = 1_000_000;

/** What the app reads beside the controller's settings: the stack around it and where its alarms go. */
export interface AppSettings extends ControllerSettings {
  /** The stack's name; `ZitiController-<environment>` unless set. */
  readonly stackName?: string;
  /** CloudFormation termination protection; on for the `prod` environment unless set. */
  readonly terminationProtection?: boolean;
  /** An existing SNS topic for the alarms instead of the stack's own. */
  readonly alarmTopicArn?: string;
  /** An existing VPC for the load balancers, by id, with `publicSubnetIds` (two or more, in different zones). */
  readonly vpcId?: string;
  readonly publicSubnetIds?: readonly string[];
}

/** The stack name of an environment unless `stackName` says otherwise. */
export function stackNameOf(environment: string): string {
  return `ZitiController-${environment}`;
}

/** Whether an environment is production: its stack is protected from termination unless the app says otherwise. */
export function isProduction(environment: string): boolean {
  return environment === 'prod' || environment === 'production';
}

/** Reads one CDK context value (`cdk.json` or `cdk synth -c key=value`). */
export type ContextLookup = (key: string) => unknown;

const DEFAULTS = {
  environment: DEFAULT_ENVIRONMENT,
  adminUsername: 'admin',
  apiSessionTimeoutMinutes: 30,
} as const;

function firstDefined(context: ContextLookup, key: string, envValue: string | undefined): unknown {
  const fromContext = context(key);
  if (fromContext !== undefined && fromContext !== '') return fromContext;
  return envValue === '' ? undefined : envValue;
}

type TextSetting = keyof DomainSettings;

/** The settings that name the custom domains, their certificates and DNS. */
export type DomainSettings = Pick<
  ControllerSettings,
  'domainName' | 'mtlsDomainName' | 'sdkDomainName' | 'mtlsOwnershipCertificateArn' | 'hostedZoneId' | 'hostedZoneName'
>;

/** A host name of at least two labels: letters, digits and inner hyphens, as DNS and API Gateway take it. */
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const ACM_CERTIFICATE_ARN = /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/;
const HOSTED_ZONE_ID = /^[A-Z0-9]{1,32}$/;
/** X.509's upper bound on a common name (RFC 5280 `ub-common-name`). */
const MAX_COMMON_NAME = 64;

const isInZone = (name: string, zone: string) => name === zone || name.endsWith(`.${zone}`);

/**
 * Why the domain settings cannot make a working stack, or undefined when they can. API Gateway serves an imported
 * certificate on an mTLS domain only with a public ACM certificate proving ownership of the name, and the mTLS domain
 * serves the certificate the plain domain names the JWT issuer with, so it needs the plain domain too.
 */
export function domainSettingsProblem(settings: DomainSettings): string | undefined {
  const { domainName, mtlsDomainName, sdkDomainName, mtlsOwnershipCertificateArn, hostedZoneId, hostedZoneName } =
    settings;
  for (const [key, value] of Object.entries({ domainName, mtlsDomainName, sdkDomainName, hostedZoneName })) {
    if (value !== undefined && !HOST_NAME.test(value)) {
      return `${key} must be a lowercase host name such as ziti.example.com, got ${JSON.stringify(value)}`;
    }
  }
  if (domainName !== undefined && domainName.length > MAX_COMMON_NAME) {
    return `domainName is the server certificate's common name, at most ${MAX_COMMON_NAME} characters (X.509)`;
  }
  if (mtlsOwnershipCertificateArn !== undefined && !ACM_CERTIFICATE_ARN.test(mtlsOwnershipCertificateArn)) {
    return `mtlsOwnershipCertificateArn must be an ACM certificate ARN, got ${JSON.stringify(mtlsOwnershipCertificateArn)}`;
  }
  if (hostedZoneId !== undefined && !HOSTED_ZONE_ID.test(hostedZoneId)) {
    return `hostedZoneId must be a Route 53 hosted zone id such as Z0123456789ABCDEFGHIJ, got ${JSON.stringify(hostedZoneId)}`;
  }
  if ((hostedZoneId === undefined) !== (hostedZoneName === undefined)) {
    return 'hostedZoneId and hostedZoneName go together: set both or neither';
  }
  if (mtlsDomainName !== undefined && domainName === undefined) {
    return (
      'mtlsDomainName needs domainName: the mTLS domain serves the server certificate SDKs verify enrollment JWTs ' +
      'against, and the JWT issuer is the plain domain'
    );
  }
  if (mtlsDomainName !== undefined && mtlsDomainName === domainName) {
    return 'mtlsDomainName must differ from domainName: one domain cannot both require and not ask for a client certificate';
  }
  if (mtlsDomainName !== undefined && mtlsOwnershipCertificateArn === undefined && hostedZoneId === undefined) {
    return (
      'mtlsDomainName needs mtlsOwnershipCertificateArn (a public ACM certificate for that name, in the same region) ' +
      'or hostedZoneId and hostedZoneName (to request one): API Gateway verifies ownership of an mTLS domain that ' +
      'serves an imported certificate'
    );
  }
  if (sdkDomainName !== undefined && mtlsDomainName === undefined) {
    return 'sdkDomainName sends SDKs on to the mTLS domain: it needs mtlsDomainName';
  }
  if (sdkDomainName !== undefined && (sdkDomainName === domainName || sdkDomainName === mtlsDomainName)) {
    return 'sdkDomainName must differ from domainName and mtlsDomainName: its /version answers differently';
  }
  if (mtlsOwnershipCertificateArn !== undefined && mtlsDomainName === undefined) {
    return 'mtlsOwnershipCertificateArn is only for mtlsDomainName, which is not set';
  }
  if (hostedZoneId !== undefined && domainName === undefined) {
    return 'hostedZoneId and hostedZoneName are for domainName (and mtlsDomainName), which is not set';
  }
  if (hostedZoneName !== undefined) {
    for (const [key, name] of Object.entries({ domainName, mtlsDomainName, sdkDomainName })) {
      if (name !== undefined && !isInZone(name, hostedZoneName)) {
        return `${key} ${name} is not in the hosted zone ${hostedZoneName}`;
      }
    }
  }
  return undefined;
}

/** What a deployment SDKs can use is checked against: its domains, its front door, and whether it is meant for them. */
export type SdkReadinessSettings = Pick<DomainSettings, 'domainName' | 'mtlsDomainName' | 'sdkDomainName'> &
  FrontDoorSettings & {
    /** The operator wants the management API only (`managementOnly`): no SDK will enroll or log in. */
    readonly managementOnly?: boolean;
  };

/**
 * Why SDKs could not use a deployment with these settings, or undefined when they could (or it is declared for the
 * management API alone). SDKs call the APIs at the host root and enroll at the enrollment JWT's issuer,
 * `https://<domainName>`, and trust the controller only when the certificate that host presents is the server
 * certificate the JWT verifies against: API Gateway's own `execute-api` address has a stage name in its paths and
 * presents Amazon's certificate, so without `domainName` no SDK can enroll. Behind the REST API, an SDK enrolled with a
 * one-time token logs in with its certificate, which only the mTLS domain (`mtlsDomainName`) receives, and the OpenZiti
 * C SDK (every tunneler) is led there only by the SDKs' front door (`sdkDomainName`). The load balancer is one address
 * that takes a certificate where one is sent: `domainName` is all it needs.
 */
export function sdkReadinessProblem(settings: SdkReadinessSettings): string | undefined {
  if (settings.managementOnly === true) return undefined;
  const needed =
    settings.frontDoor === 'load-balancer'
      ? (['domainName'] as const)
      : (['domainName', 'mtlsDomainName', 'sdkDomainName'] as const);
  const missing = needed.filter((key) => settings[key] === undefined);
  if (missing.length === 0) return undefined;
  const restApi = settings.frontDoor !== 'load-balancer';
  return (
    `SDKs cannot use this deployment: set ${missing.join(', ')}` +
    (restApi
      ? ' (and hostedZoneId with hostedZoneName, or mtlsOwnershipCertificateArn where DNS is elsewhere)'
      : ' (and hostedZoneId with hostedZoneName for its DNS record)') +
    ". SDKs enroll at https://<domainName> and trust only the server certificate it presents, which API Gateway's " +
    'execute-api address cannot present' +
    (restApi
      ? '; certificate logins reach the REST API only at mtlsDomainName, and the C SDK is led there by sdkDomainName'
      : '') +
    '. For the management API alone, with no SDKs, set managementOnly=true (docs/aws.md, "First deploy")'
  );
}

/** An environment name: it is part of the stack name, the stage name and resource names. */
const ENVIRONMENT = /^[a-z][a-z0-9-]{0,19}$/;
/** DynamoDB's table names. */
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const RETENTION_DAYS = new Set<number>(Object.values(RetentionDays).filter((value) => typeof value === 'number'));

/** The settings beside the domains that a synth checks. */
export type OtherSettings = Partial<
  Pick<
    ControllerSettings,
    | 'tableName'
    | 'alarmEmail'
    | 'adminPasswordRotationDays'
    | 'logRetentionDays'
    | 'memorySize'
    | 'apiSessionTimeoutMinutes'
    | 'oidcAccessTokenSeconds'
    | 'oidcRefreshTokenSeconds'
    | 'requestLogSampleRate'
    | 'firewall'
    | keyof ApiLimits
  >
> & { readonly environment?: string };

/** AWS WAF's range of a rate-based rule's limit. */
const FIREWALL_RATE_LIMIT = { min: 10, max: 2_000_000_000 } as const;

/** The least each count setting takes: one of everything, but for WAF, which counts no fewer than ten requests. */
const INTEGER_MINIMUMS = {
  apiSessionTimeoutMinutes: 1,
  // The controller's own floors (shared/config.ts, OidcConfig): a synth refuses what the functions would.
  oidcAccessTokenSeconds: 10,
  oidcRefreshTokenSeconds: 60,
  apiRateLimit: 1,
  apiBurstLimit: 1,
  firewallRateLimit: FIREWALL_RATE_LIMIT.min,
  fleetSize: 1,
  loginRateLimit: 1,
  loginBurstLimit: 1,
} as const satisfies Partial<Record<keyof OtherSettings, number>>;

/** Why a count setting is not an integer in its range, or undefined when it is (or is not set). */
function integerProblem(settings: OtherSettings): string | undefined {
  for (const [key, min] of Object.entries(INTEGER_MINIMUMS)) {
    const value = settings[key as keyof typeof INTEGER_MINIMUMS];
    if (value !== undefined && (!Number.isInteger(value) || value < min)) {
      return `${key} must be an integer >= ${min}, got ${JSON.stringify(value)}`;
    }
  }
  const { firewallRateLimit } = settings;
  if (firewallRateLimit !== undefined && firewallRateLimit > FIREWALL_RATE_LIMIT.max) {
    return `firewallRateLimit must be at most ${FIREWALL_RATE_LIMIT.max} (AWS WAF's largest), got ${firewallRateLimit}`;
  }
  // A limit nothing enforces: the deployment would believe in a per-address limit it does not have.
  if (firewallRateLimit !== undefined && settings.firewall === false) {
    return "firewallRateLimit is the web ACL's per-address limit: leave it unset with firewall false";
  }
  return undefined;
}

/**
 * Why the settings other than the domains cannot make a working stack, or undefined when they can. The construct
 * checks the props it is given with this too, so a number set in code is held to what one from context is.
 */
export function settingsProblem(settings: OtherSettings): string | undefined {
  const { environment, tableName, alarmEmail, adminPasswordRotationDays, logRetentionDays, memorySize } = settings;
  const { requestLogSampleRate } = settings;
  if (environment !== undefined && !ENVIRONMENT.test(environment)) {
    return `environment must be lowercase letters, digits and hyphens (at most 20, a letter first), got ${JSON.stringify(environment)}`;
  }
  if (tableName !== undefined && !TABLE_NAME.test(tableName)) {
    return `tableName must be a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -), got ${JSON.stringify(tableName)}`;
  }
  if (alarmEmail !== undefined && !EMAIL.test(alarmEmail)) {
    return `alarmEmail must be an e-mail address, got ${JSON.stringify(alarmEmail)}`;
  }
  if (
    adminPasswordRotationDays !== undefined &&
    (!Number.isInteger(adminPasswordRotationDays) || adminPasswordRotationDays < 1 || adminPasswordRotationDays > 1000)
  ) {
    return `adminPasswordRotationDays must be an integer from 1 to 1000 (Secrets Manager's range), got ${adminPasswordRotationDays}`;
  }
  if (logRetentionDays !== undefined && !RETENTION_DAYS.has(logRetentionDays)) {
    return `logRetentionDays must be one of CloudWatch Logs' retentions (${[...RETENTION_DAYS].sort((a, b) => a - b).join(', ')}), got ${logRetentionDays}`;
  }
  if (memorySize !== undefined && (!Number.isInteger(memorySize) || memorySize < 128 || memorySize > 10240)) {
    return `memorySize must be an integer from 128 to 10240 (MB), got ${memorySize}`;
  }
  if (
    requestLogSampleRate !== undefined &&
    (!Number.isInteger(requestLogSampleRate) ||
      requestLogSampleRate < 1 ||
      requestLogSampleRate > MAX_REQUEST_LOG_SAMPLE_RATE)
  ) {
    return `requestLogSampleRate must be an integer from 1 (every request) to ${MAX_REQUEST_LOG_SAMPLE_RATE}, got ${requestLogSampleRate}`;
  }
  return integerProblem(settings);
}

/** A count setting as given, or undefined; `-c key=value` always yields a string, `cdk.json` may hold a number. */
function integerOf(key: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed)) throw new Error(`${key} must be an integer, got ${JSON.stringify(value)}`);
  return parsed;
}

/**
 * Resolves the settings from CDK context first, then the environment (`ZITI_ADMIN_USERNAME`, `ZITI_ENVIRONMENT`,
 * `ZITI_TABLE_NAME`, …: docs/aws.md's table of settings names each), then the defaults. Invalid values and inconsistent domain settings fail the synth
 * rather than the deploy.
 */
export function resolveControllerSettings(context: ContextLookup, env: NodeJS.ProcessEnv = process.env): AppSettings {
  const adminUsername = firstDefined(context, 'adminUsername', env.ZITI_ADMIN_USERNAME) ?? DEFAULTS.adminUsername;
  if (typeof adminUsername !== 'string' || adminUsername.trim() === '') {
    throw new Error(`adminUsername must be a non-empty string, got ${JSON.stringify(adminUsername)}`);
  }

  if (firstDefined(context, 'mtlsCertificateArn', env.ZITI_MTLS_CERTIFICATE_ARN) !== undefined) {
    throw new Error(
      'mtlsCertificateArn is no longer read: the mTLS domain serves the server certificate the bootstrap imports. ' +
        'Give mtlsOwnershipCertificateArn (a public ACM certificate for the mTLS name, for ownership verification) or ' +
        'hostedZoneId and hostedZoneName instead',
    );
  }
  const text = (key: TextSetting, envValue: string | undefined) => {
    const value = firstDefined(context, key, envValue);
    if (value !== undefined && typeof value !== 'string') throw new Error(`${key} must be a string`);
    return value?.trim();
  };
  // Host names are case-insensitive; a zone name may come with Route 53's trailing dot.
  const domains: DomainSettings = {
    domainName: text('domainName', env.ZITI_DOMAIN_NAME)?.toLowerCase(),
    mtlsDomainName: text('mtlsDomainName', env.ZITI_MTLS_DOMAIN_NAME)?.toLowerCase(),
    sdkDomainName: text('sdkDomainName', env.ZITI_SDK_DOMAIN_NAME)?.toLowerCase(),
    mtlsOwnershipCertificateArn: text('mtlsOwnershipCertificateArn', env.ZITI_MTLS_OWNERSHIP_CERTIFICATE_ARN),
    hostedZoneId: text('hostedZoneId', env.ZITI_HOSTED_ZONE_ID),
    hostedZoneName: text('hostedZoneName', env.ZITI_HOSTED_ZONE_NAME)?.toLowerCase().replace(/\.$/, ''),
  };
  const problem = domainSettingsProblem(domains);
  if (problem) throw new Error(problem);

  const allowPrivate = flag(context, 'jwksAllowPrivateAddresses', env.ZITI_JWKS_ALLOW_PRIVATE_IPS);
  const plain = (key: string, envValue: string | undefined) => {
    const value = firstDefined(context, key, envValue);
    if (value !== undefined && typeof value !== 'string') throw new Error(`${key} must be a string`);
    return value?.trim();
  };
  const optionalInteger = (key: string, envValue: string | undefined) =>
    integerOf(key, firstDefined(context, key, envValue));
  const others = {
    environment: plain('environment', env.ZITI_ENVIRONMENT) ?? DEFAULTS.environment,
    tableName: plain('tableName', env.ZITI_TABLE_NAME),
    alarmEmail: plain('alarmEmail', env.ZITI_ALARM_EMAIL),
    adminPasswordRotationDays: optionalInteger('adminPasswordRotationDays', env.ZITI_ADMIN_PASSWORD_ROTATION_DAYS),
    logRetentionDays: optionalInteger('logRetentionDays', env.ZITI_LOG_RETENTION_DAYS),
    memorySize: optionalInteger('memorySize', env.ZITI_MEMORY_SIZE),
    apiSessionTimeoutMinutes:
      optionalInteger('apiSessionTimeoutMinutes', env.ZITI_API_SESSION_TIMEOUT_MINUTES) ??
      DEFAULTS.apiSessionTimeoutMinutes,
    // Given only when set; the construct has the controller's defaults (1800 and 86400 seconds).
    oidcAccessTokenSeconds: optionalInteger('oidcAccessTokenSeconds', env.ZITI_OIDC_ACCESS_TOKEN_SECONDS),
    oidcRefreshTokenSeconds: optionalInteger('oidcRefreshTokenSeconds', env.ZITI_OIDC_REFRESH_TOKEN_SECONDS),
    // Given only when set, so that firewall=false can refuse it (settingsProblem); the construct has the default.
    firewallRateLimit: optionalInteger('firewallRateLimit', env.ZITI_FIREWALL_RATE_LIMIT),
    // The REST API's throttles: given only when set, so that the load balancer can refuse them (frontDoorProblem).
    apiRateLimit: optionalInteger('apiRateLimit', env.ZITI_API_RATE_LIMIT),
    apiBurstLimit: optionalInteger('apiBurstLimit', env.ZITI_API_BURST_LIMIT),
    fleetSize: optionalInteger('fleetSize', env.ZITI_FLEET_SIZE),
    loginRateLimit: optionalInteger('loginRateLimit', env.ZITI_LOGIN_RATE_LIMIT),
    loginBurstLimit: optionalInteger('loginBurstLimit', env.ZITI_LOGIN_BURST_LIMIT),
    requestLogSampleRate: optionalInteger('requestLogSampleRate', env.ZITI_REQUEST_LOG_SAMPLE_RATE),
  };
  const flags = {
    firewall: flag(context, 'firewall', env.ZITI_FIREWALL),
    apiGatewayCloudWatchRole: flag(context, 'apiGatewayCloudWatchRole', env.ZITI_API_GATEWAY_CLOUDWATCH_ROLE),
    detailedMetrics: flag(context, 'detailedMetrics', env.ZITI_DETAILED_METRICS),
    truststoreTrail: flag(context, 'truststoreTrail', env.ZITI_TRUSTSTORE_TRAIL),
    terminationProtection: flag(context, 'terminationProtection', env.ZITI_TERMINATION_PROTECTION),
    oidcAuth: flag(context, 'oidcAuth', env.ZITI_OIDC_AUTH),
  };
  const othersProblem = settingsProblem({ ...others, ...definedOnly({ firewall: flags.firewall }) });
  if (othersProblem) throw new Error(othersProblem);
  const stackName = plain('stackName', env.ZITI_STACK_NAME);
  if (stackName !== undefined && !/^[A-Za-z][A-Za-z0-9-]{0,127}$/.test(stackName)) {
    throw new Error(`stackName must be a CloudFormation stack name, got ${JSON.stringify(stackName)}`);
  }
  const alarmTopicArn = plain('alarmTopicArn', env.ZITI_ALARM_TOPIC_ARN);
  if (alarmTopicArn !== undefined && !/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]+$/.test(alarmTopicArn)) {
    throw new Error(`alarmTopicArn must be an SNS topic ARN, got ${JSON.stringify(alarmTopicArn)}`);
  }
  const frontDoorSettings = {
    // Checked against the front doors by frontDoorProblem.
    frontDoor: plain('frontDoor', env.ZITI_FRONT_DOOR) as FrontDoor | undefined,
  };
  const existingVpc = {
    vpcId: plain('vpcId', env.ZITI_VPC_ID),
    publicSubnetIds: list(firstDefined(context, 'publicSubnetIds', env.ZITI_PUBLIC_SUBNET_IDS), 'publicSubnetIds'),
  };
  const capacity = {
    // Checked against the billing modes by tableCapacityProblem.
    tableBillingMode: plain('tableBillingMode', env.ZITI_TABLE_BILLING_MODE) as TableBillingMode | undefined,
    tableReadCapacityMin: optionalInteger('tableReadCapacityMin', env.ZITI_TABLE_READ_CAPACITY_MIN),
    tableReadCapacityMax: optionalInteger('tableReadCapacityMax', env.ZITI_TABLE_READ_CAPACITY_MAX),
    tableWriteCapacityMin: optionalInteger('tableWriteCapacityMin', env.ZITI_TABLE_WRITE_CAPACITY_MIN),
    tableWriteCapacityMax: optionalInteger('tableWriteCapacityMax', env.ZITI_TABLE_WRITE_CAPACITY_MAX),
    tableTargetUtilization: optionalInteger('tableTargetUtilization', env.ZITI_TABLE_TARGET_UTILIZATION),
  };
  const capacityIssue = tableCapacityProblem({ ...capacity, ...definedOnly({ tableName: others.tableName }) });
  if (capacityIssue) throw new Error(capacityIssue);
  const routerEndpoint = {
    routerEndpoint: flag(context, 'routerEndpoint', env.ZITI_ROUTER_ENDPOINT),
    ctrlDomainName: plain('ctrlDomainName', env.ZITI_CTRL_DOMAIN_NAME)?.toLowerCase(),
    routerEndpointPort: optionalInteger('routerEndpointPort', env.ZITI_ROUTER_ENDPOINT_PORT),
    routerEndpointCpu: optionalInteger('routerEndpointCpu', env.ZITI_ROUTER_ENDPOINT_CPU),
    routerEndpointMemoryMb: optionalInteger('routerEndpointMemoryMb', env.ZITI_ROUTER_ENDPOINT_MEMORY_MB),
    routerEndpointDesiredCount: optionalInteger('routerEndpointDesiredCount', env.ZITI_ROUTER_ENDPOINT_DESIRED_COUNT),
    routerEndpointMinCount: optionalInteger('routerEndpointMinCount', env.ZITI_ROUTER_ENDPOINT_MIN_COUNT),
    routerEndpointMaxCount: optionalInteger('routerEndpointMaxCount', env.ZITI_ROUTER_ENDPOINT_MAX_COUNT),
  };
  const routerEndpointIssue = routerEndpointProblem(definedOnly(routerEndpoint));
  if (routerEndpointIssue) throw new Error(routerEndpointIssue);
  const frontDoorIssue =
    frontDoorProblem({ ...frontDoorSettings, ...domains, ...others, ...flags }) ??
    existingVpcProblem({
      ...frontDoorSettings,
      ...existingVpc,
      ...definedOnly({ routerEndpoint: routerEndpoint.routerEndpoint }),
    });
  if (frontDoorIssue) throw new Error(frontDoorIssue);
  // Last, so that a setting that is wrong in itself is named before what is missing.
  const sdkIssue = sdkReadinessProblem({
    ...definedOnly({ ...frontDoorSettings, ...domains }),
    ...definedOnly({ managementOnly: flag(context, 'managementOnly', env.ZITI_MANAGEMENT_ONLY) }),
  });
  if (sdkIssue) throw new Error(sdkIssue);

  return {
    adminUsername,
    ...(allowPrivate === true ? { jwksAllowPrivateAddresses: true } : {}),
    ...definedOnly({ ...others, ...flags, stackName, alarmTopicArn }),
    ...definedOnly({ ...frontDoorSettings, ...existingVpc, ...capacity, ...routerEndpoint }),
    environment: others.environment,
    apiSessionTimeoutMinutes: others.apiSessionTimeoutMinutes,
    ...definedOnly(domains),
  };
}

/** A list setting: an array in `cdk.json`, or comma-separated (`-c key=a,b`, the environment). */
function list(value: unknown, key: string): string[] | undefined {
  if (value === undefined) return undefined;
  const items = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(items) || items.some((item) => typeof item !== 'string')) {
    throw new Error(`${key} must be a list of strings, got ${JSON.stringify(value)}`);
  }
  return items.map((item: string) => item.trim()).filter((item) => item !== '');
}

/** A setting that is true or false (`-c key=true` gives a string, `cdk.json` may hold a boolean). */
function flag(context: ContextLookup, key: string, envValue: string | undefined): boolean | undefined {
  const value = firstDefined(context, key, envValue);
  if (value === undefined) return undefined;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`${key} must be true or false, got ${JSON.stringify(value)}`);
}

function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}
