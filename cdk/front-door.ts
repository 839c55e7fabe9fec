import type { RouterEndpointSettings } from './router-endpoint-settings.ts';

/**
 * What clients reach the functions through (README, "Front door: the load balancer or the REST API").
 * - `rest-api`: API Gateway's REST API, billed per request and nothing when idle; its mutual TLS makes a client
 *   certificate mandatory for a whole domain, hence the mTLS domain and the SDKs' front door beside the plain one.
 * - `load-balancer`: an Application Load Balancer with mutual TLS in passthrough mode, billed by the hour and by load
 *   (cheaper than per request from a fleet's traffic on), one address for every client: it asks for a client
 *   certificate without requiring one and hands the chain it got to the functions, which check it.
 */
export type FrontDoor = 'load-balancer' | 'rest-api';

export const FRONT_DOORS: readonly FrontDoor[] = ['load-balancer', 'rest-api'];

/** The REST API, as every deployment before the load balancer had: a stack deployed again keeps its front door. */
export const DEFAULT_FRONT_DOOR: FrontDoor = 'rest-api';

/** The settings that choose and shape the front door. */
export interface FrontDoorSettings {
  /** What clients reach the functions through; `rest-api` by default. */
  readonly frontDoor?: FrontDoor;
}

/** The functions' `FRONT_DOOR`: which events they are sent and where a client certificate comes from. */
export function frontDoorEnvironment(frontDoor: FrontDoor): { FRONT_DOOR: 'alb' | 'rest-api' } {
  return { FRONT_DOOR: frontDoor === 'load-balancer' ? 'alb' : 'rest-api' };
}

/** The settings a front door is checked against. */
export interface FrontDoorCheck extends FrontDoorSettings {
  readonly domainName?: string;
  readonly mtlsDomainName?: string;
  readonly sdkDomainName?: string;
  readonly mtlsOwnershipCertificateArn?: string;
  readonly apiRateLimit?: number;
  readonly apiBurstLimit?: number;
  readonly fleetSize?: number;
  readonly loginRateLimit?: number;
  readonly loginBurstLimit?: number;
  readonly detailedMetrics?: boolean;
  readonly truststoreTrail?: boolean;
  readonly apiGatewayCloudWatchRole?: boolean;
}

const LOGIN_THROTTLES =
  "API Gateway's throttles of the login and enroll methods, which the load balancer has none of: there the web ACL's " +
  "per-address limits and the controller's own login attempt limits hold (docs/security.md)";

/**
 * The settings only the REST API honours, each with why: the load balancer would take them and do nothing with them,
 * so a deployment that set one would believe in a limit or a record it does not have.
 */
const REST_API_ONLY_SETTINGS = {
  apiRateLimit:
    "is the REST API stage's throttling, which the load balancer has no equivalent of (the web ACL's per-address " +
    'limit, firewallRateLimit, holds there)',
  apiBurstLimit: "is the REST API stage's throttling, which the load balancer has no equivalent of",
  fleetSize: `sizes ${LOGIN_THROTTLES}`,
  loginRateLimit: `is one of ${LOGIN_THROTTLES}`,
  loginBurstLimit: `is one of ${LOGIN_THROTTLES}`,
  detailedMetrics:
    "turns on API Gateway's per-method metrics; the load balancer's metrics (per load balancer and target group) " +
    'come without it',
  truststoreTrail:
    "records the writes of the REST API's mTLS truststore; the load balancer passes client chains through and has " +
    'no truststore',
  apiGatewayCloudWatchRole: "sets the account's role for the REST API stage's logs; the load balancer has no stage",
} as const satisfies Partial<Record<keyof FrontDoorCheck, string>>;

/** The settings of the REST API's second and third custom domains. */
const REST_API_DOMAIN_SETTINGS = ['mtlsDomainName', 'sdkDomainName', 'mtlsOwnershipCertificateArn'] as const;

/**
 * Why the front door settings cannot make a working stack, or undefined when they can. The load balancer serves the
 * controller's server certificate, which the bootstrap issues for `domainName` only, and needs neither the mTLS domain
 * nor the SDKs' front door: those exist because API Gateway's mutual TLS is all or nothing per domain.
 */
export function frontDoorProblem(settings: FrontDoorCheck): string | undefined {
  const { frontDoor } = settings;
  if (frontDoor !== undefined && !FRONT_DOORS.includes(frontDoor)) {
    return `frontDoor must be one of ${FRONT_DOORS.join(', ')}, got ${JSON.stringify(frontDoor)}`;
  }
  if (frontDoor !== 'load-balancer') return undefined;
  if (settings.domainName === undefined) {
    return (
      'frontDoor load-balancer needs domainName: its HTTPS listener serves the server certificate the bootstrap ' +
      'issues for that name'
    );
  }
  const restApiOnly = REST_API_DOMAIN_SETTINGS.find((key) => settings[key] !== undefined);
  if (restApiOnly !== undefined) {
    return (
      `${restApiOnly} is for the REST API's mTLS domain and SDKs' front door: the load balancer is one address that ` +
      'takes a client certificate where one is sent'
    );
  }
  for (const [key, why] of Object.entries(REST_API_ONLY_SETTINGS)) {
    if (settings[key as keyof typeof REST_API_ONLY_SETTINGS] !== undefined) {
      return `${key} ${why}: leave it unset with frontDoor load-balancer`;
    }
  }
  return undefined;
}

const VPC_ID = /^vpc-[0-9a-f]{8,17}$/;
const SUBNET_ID = /^subnet-[0-9a-f]{8,17}$/;

/**
 * Why an existing VPC for the load balancers (the front door's, the routers' endpoint's) cannot be used, or undefined
 * when it can (or none is given). An internet-facing load balancer needs public subnets in two availability zones at
 * least.
 */
export function existingVpcProblem(
  settings: FrontDoorSettings &
    Pick<RouterEndpointSettings, 'routerEndpoint'> & {
      readonly vpcId?: string;
      readonly publicSubnetIds?: readonly string[];
    },
): string | undefined {
  const { vpcId, publicSubnetIds } = settings;
  if (vpcId === undefined && publicSubnetIds === undefined) return undefined;
  if (settings.frontDoor !== 'load-balancer' && settings.routerEndpoint !== true) {
    return 'vpcId and publicSubnetIds are for frontDoor load-balancer or routerEndpoint: true';
  }
  if (vpcId === undefined || !VPC_ID.test(vpcId))
    return `vpcId must be a VPC id such as vpc-0123456789abcdef0, got ${JSON.stringify(vpcId)}`;
  const subnets = publicSubnetIds ?? [];
  if (subnets.length < 2 || subnets.some((id) => !SUBNET_ID.test(id))) {
    return `publicSubnetIds must be two or more subnet ids (subnet-…, in different zones), got ${JSON.stringify(subnets)}`;
  }
  return undefined;
}
