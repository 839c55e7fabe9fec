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
   * The custom domain with mutual TLS (certificate logins and enrollment) and its ACM certificate's ARN; without both,
   * the stack still keeps the truststore but makes no mTLS domain.
   */
  readonly mtlsDomainName?: string;
  readonly mtlsCertificateArn?: string;
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

type IntegerSetting = Exclude<
  keyof ControllerSettings,
  'adminUsername' | 'mtlsDomainName' | 'mtlsCertificateArn' | 'jwksAllowPrivateAddresses'
>;

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
 * `ZITI_API_SESSION_TIMEOUT_MINUTES`, `ZITI_API_RATE_LIMIT`, `ZITI_API_BURST_LIMIT`, `ZITI_FIREWALL_RATE_LIMIT`),
 * then the defaults. Invalid values fail the synth rather than the deploy.
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

  const text = (key: 'mtlsDomainName' | 'mtlsCertificateArn', envValue: string | undefined) => {
    const value = firstDefined(context, key, envValue);
    if (value !== undefined && typeof value !== 'string') throw new Error(`${key} must be a string`);
    return value;
  };
  const mtlsDomainName = text('mtlsDomainName', env.ZITI_MTLS_DOMAIN_NAME);
  const mtlsCertificateArn = text('mtlsCertificateArn', env.ZITI_MTLS_CERTIFICATE_ARN);
  if ((mtlsDomainName === undefined) !== (mtlsCertificateArn === undefined)) {
    throw new Error('mtlsDomainName and mtlsCertificateArn go together: set both or neither');
  }

  const allowPrivate = firstDefined(context, 'jwksAllowPrivateAddresses', env.ZITI_JWKS_ALLOW_PRIVATE_IPS);
  if (allowPrivate !== undefined && !['true', 'false', true, false].includes(allowPrivate as string | boolean)) {
    throw new Error(`jwksAllowPrivateAddresses must be true or false, got ${JSON.stringify(allowPrivate)}`);
  }

  return {
    adminUsername,
    ...(allowPrivate === true || allowPrivate === 'true' ? { jwksAllowPrivateAddresses: true } : {}),
    ...(mtlsDomainName && mtlsCertificateArn ? { mtlsDomainName, mtlsCertificateArn } : {}),
    apiSessionTimeoutMinutes: integer('apiSessionTimeoutMinutes', env.ZITI_API_SESSION_TIMEOUT_MINUTES),
    apiRateLimit: integer('apiRateLimit', env.ZITI_API_RATE_LIMIT),
    apiBurstLimit: integer('apiBurstLimit', env.ZITI_API_BURST_LIMIT),
    // AWS WAF's smallest rate-based limit.
    firewallRateLimit: integer('firewallRateLimit', env.ZITI_FIREWALL_RATE_LIMIT, 10),
  };
}
