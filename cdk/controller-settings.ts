/** How much traffic the API takes before it answers 429. */
export interface ApiLimits {
  /** Requests per second the stage serves in the long run, all clients together (API Gateway stage throttling). */
  readonly apiRateLimit: number;
  /** Requests the stage serves at once above that rate, all clients together. */
  readonly apiBurstLimit: number;
  /** Requests one client IP may send in any five minutes (the web ACL's rate-based rule). */
  readonly firewallRateLimit: number;
}

/**
 * Room for a large network's clients and routers, yet far below API Gateway's account-wide 10,000 requests per
 * second: a runaway script or a flood is cut off before it runs up the Lambda and DynamoDB bill.
 */
export const DEFAULT_API_LIMITS: ApiLimits = { apiRateLimit: 500, apiBurstLimit: 1000, firewallRateLimit: 5000 };

/** Deploy-time settings of the controller stack. */
export interface ControllerSettings extends ApiLimits {
  /** Name of the default admin identity the bootstrap creates on first deploy. */
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
   * the mTLS domain, the one way the OpenZiti C SDK can be led there (README, "AWS's three ways in").
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
}

/** Reads one CDK context value (`cdk.json` or `cdk synth -c key=value`). */
export type ContextLookup = (key: string) => unknown;

const DEFAULTS: ControllerSettings = { adminUsername: 'admin', apiSessionTimeoutMinutes: 30, ...DEFAULT_API_LIMITS };

function firstDefined(context: ContextLookup, key: string, envValue: string | undefined): unknown {
  const fromContext = context(key);
  if (fromContext !== undefined && fromContext !== '') return fromContext;
  return envValue === '' ? undefined : envValue;
}

type TextSetting = keyof DomainSettings;
type IntegerSetting = Exclude<keyof ControllerSettings, 'adminUsername' | 'jwksAllowPrivateAddresses' | TextSetting>;

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

function integerAtLeast(min: number, key: IntegerSetting, value: unknown): number {
  // `-c key=value` always yields a string, `cdk.json` may hold a number.
  const parsed = value === undefined ? DEFAULTS[key] : Number(value);
  if (!Number.isInteger(parsed) || parsed < min) {
    throw new Error(`${key} must be an integer >= ${min}, got ${JSON.stringify(value)}`);
  }
  return parsed;
}

/**
 * Resolves the settings from CDK context first, then the environment (`ZITI_ADMIN_USERNAME`,
 * `ZITI_API_SESSION_TIMEOUT_MINUTES`, `ZITI_API_RATE_LIMIT`, `ZITI_API_BURST_LIMIT`, `ZITI_FIREWALL_RATE_LIMIT`,
 * `ZITI_JWKS_ALLOW_PRIVATE_IPS`, `ZITI_DOMAIN_NAME`, `ZITI_MTLS_DOMAIN_NAME`, `ZITI_MTLS_OWNERSHIP_CERTIFICATE_ARN`,
 * `ZITI_HOSTED_ZONE_ID`, `ZITI_HOSTED_ZONE_NAME`), then the defaults. Invalid values and inconsistent domain settings
 * fail the synth rather than the deploy.
 */
export function resolveControllerSettings(
  context: ContextLookup,
  env: NodeJS.ProcessEnv = process.env,
): ControllerSettings {
  const adminUsername = firstDefined(context, 'adminUsername', env.ZITI_ADMIN_USERNAME) ?? DEFAULTS.adminUsername;
  if (typeof adminUsername !== 'string' || adminUsername.trim() === '') {
    throw new Error(`adminUsername must be a non-empty string, got ${JSON.stringify(adminUsername)}`);
  }

  const integer = (key: IntegerSetting, envValue: string | undefined, min = 1) =>
    integerAtLeast(min, key, firstDefined(context, key, envValue));

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

  const allowPrivate = firstDefined(context, 'jwksAllowPrivateAddresses', env.ZITI_JWKS_ALLOW_PRIVATE_IPS);
  if (allowPrivate !== undefined && !['true', 'false', true, false].includes(allowPrivate as string | boolean)) {
    throw new Error(`jwksAllowPrivateAddresses must be true or false, got ${JSON.stringify(allowPrivate)}`);
  }

  return {
    adminUsername,
    ...(allowPrivate === true || allowPrivate === 'true' ? { jwksAllowPrivateAddresses: true } : {}),
    ...Object.fromEntries(Object.entries(domains).filter(([, value]) => value !== undefined)),
    apiSessionTimeoutMinutes: integer('apiSessionTimeoutMinutes', env.ZITI_API_SESSION_TIMEOUT_MINUTES),
    apiRateLimit: integer('apiRateLimit', env.ZITI_API_RATE_LIMIT),
    apiBurstLimit: integer('apiBurstLimit', env.ZITI_API_BURST_LIMIT),
    // AWS WAF's smallest rate-based limit.
    firewallRateLimit: integer('firewallRateLimit', env.ZITI_FIREWALL_RATE_LIMIT, 10),
  };
}
