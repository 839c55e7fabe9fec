/**
 * Where the network's keys live: in AWS the CA keys in KMS (key ids from the stack) and the server key in a Secrets
 * Manager secret (its ARN); key files under a directory for `npm start`, process memory for tests, and nowhere in a
 * function the stack gives no key (signing there fails loudly instead of minting a throwaway key). In AWS each
 * function is given only the keys it signs with.
 */
export type PkiKeyConfig =
  | {
      readonly kind: 'kms';
      readonly rootCa: string | undefined;
      readonly signingCa: string | undefined;
      readonly serverKeySecretArn: string | undefined;
    }
  | { readonly kind: 'files'; readonly directory: string }
  | { readonly kind: 'memory' }
  | { readonly kind: 'none' };

/**
 * Where the key that encrypts stored secrets (TOTP seeds) lives: a symmetric KMS key in AWS (only the functions that
 * seal or open secrets get its id), a key file beside the PKI keys in `npm start`, process memory in tests.
 */
export type SecretKeyConfig =
  | { readonly kind: 'kms'; readonly keyId: string }
  | { readonly kind: 'files'; readonly directory: string }
  | { readonly kind: 'memory' }
  | { readonly kind: 'none' };

/** Where database snapshots go: DynamoDB on-demand backups in AWS, JSON Lines files locally. */
export type SnapshotConfig = { readonly kind: 'backup' } | { readonly kind: 'file'; readonly directory: string };

export interface LoginRateLimitConfig {
  readonly perIp: number;
  readonly perUsername: number;
  /** One address's attempts on one username (`shared/rate-limit/login-limits.ts`). */
  readonly perSourceAndUsername: number;
  readonly windowSeconds: number;
}

/** MFA code attempts per fixed window (`shared/rate-limit/login-limits.ts`). */
export interface MfaRateLimitConfig {
  /** The identity's ceiling across all addresses. */
  readonly perIdentity: number;
  /** One address's attempts on one identity. */
  readonly perSourceAndIdentity: number;
  readonly windowSeconds: number;
}

export interface JwksConfig {
  readonly timeoutMs: number;
  readonly maxBytes: number;
  /** How long a fetched key set is used before it is fetched again. */
  readonly cacheSeconds: number;
  /** The least time between two fetches of one endpoint (an unknown `kid` may not make the controller hammer it). */
  readonly refetchCooldownSeconds: number;
  /** Extra CA certificates (PEM) trusted for JWKS endpoints: a private identity provider, or a test's own server. */
  readonly trustedCaPem: string | undefined;
  /**
   * Whether JWKS endpoints may resolve to other than public addresses (loopback, private, ...). True locally, where
   * identity providers often run on loopback; false in Lambda, where such an endpoint would let an admin reach the
   * runtime API, the metadata service or the VPC through the controller (`shared/ext-jwt/address-policy.ts`).
   */
  readonly allowPrivateAddresses: boolean;
}

/**
 * Which requests get their summary line (`shared/http/middleware/request-summary.ts`). Every failure, every slow
 * request and every write is logged; a successful read only one time in `sampleRate`, chosen at random, its line
 * saying so (`sampleRate`) so that counts can be scaled back.
 */
export interface RequestLogConfig {
  /** One successful read in this many is logged (1: every one). */
  readonly sampleRate: number;
  /** A request taking at least this long (ms) is logged whatever its outcome. */
  readonly slowMs: number;
}

/** The S3 object API Gateway's mutual TLS reads its trusted CAs from, and the custom domain that uses it. */
export interface TruststoreConfig {
  readonly bucket: string;
  readonly key: string;
  /** Told to re-read the truststore after each publish; unset for the bootstrap, which runs before the domain exists. */
  readonly domainName: string | undefined;
}

/**
 * The deployment's front door: API Gateway's REST API (`rest-api`, nothing to pay while idle; mutual TLS on a domain of
 * its own) or an Application Load Balancer (`alb`: one address for every client, the client certificate optional on
 * the handshake and forwarded in a header, `shared/http/forwarded-certificate.ts`).
 */
export type FrontDoor = 'rest-api' | 'alb';

/** The header an ALB in mutual TLS passthrough mode forwards the client's certificate chain in, by default. */
export const ALB_CLIENT_CERT_HEADER = 'x-amzn-mtls-clientcert';

/**
 * The OIDC provider (`/oidc`, `docs/oidc-design.md`). It is served whatever `advertise` says; `/version` names it
 * (`OIDC_AUTH`, `apiVersions.edge-oidc`), which makes SDKs switch to it by themselves, only when `advertise` is on.
 */
export interface OidcConfig {
  /** `OIDC_AUTH`: whether `/version` offers the OIDC login to SDKs. */
  readonly advertise: boolean;
  /** How long an access token (and an ID token) is good for: the reference's 30 minutes unless told. */
  readonly accessTokenSeconds: number;
  /** How long a refresh token is good for: the reference's 24 hours unless told. */
  readonly refreshTokenSeconds: number;
}

/** Runtime settings, read once per cold start from the environment; every value has a default that works locally. */
export interface ControllerConfig {
  readonly tableName: string;
  /** Another DynamoDB (DynamoDB Local) instead of AWS's regional endpoint. */
  readonly dynamoDbEndpoint: string | undefined;
  readonly region: string;
  /** API sessions end after this long without a request (the reference's `edge.api.sessionTimeout`). */
  readonly apiSessionTimeoutMinutes: number;
  /** The controller's public origin (`https://host:port`), when a proxy or custom domain hides it from requests. */
  readonly publicBaseUrl: string | undefined;
  /**
   * The origin that asks for client certificates, when it is not this one (AWS: the mTLS custom domain; locally the
   * second listener of `CONTROLLER_MTLS_PORT`): requests that need a certificate and come without one are sent there
   * (`ziti-ctrl-address`), and certificate enrollments' JWTs name it.
   */
  readonly mtlsBaseUrl: string | undefined;
  /**
   * The SDKs' front door, when there is an mTLS address: the plain address identity enrollment JWTs name. It serves
   * enrollment like the plain one, but its `GET /version` sends SDKs on to the mTLS address (`sdk-front-door.ts`).
   */
  readonly sdkBaseUrl: string | undefined;
  /**
   * Where routers dial the control channel, `tls:<host>:<port>` (router enrollment JWTs' `ctrls`, `GET /controllers`'
   * `ctrlAddress`); undefined: the public base URL's host and port (`shared/net/ctrl-address.ts`).
   */
  readonly ctrlAddress: string | undefined;
  /**
   * A directory where the control channel records every frame of each router connection, decoded, one JSONL file a
   * connection (`CTRL_CHANNEL_RECORD`, `ctrl-channel/frame-recorder.ts`); unset, nothing is recorded. Test networks
   * only: the frames carry what a router is told (API session tokens).
   */
  readonly ctrlChannelRecordDir: string | undefined;
  /**
   * Whether a router's server certificate may name a loopback address (127.0.0.1, ::1), so a router on the same
   * machine as a local controller needs no name of its own. Set by `npm start` alone, never from the environment: a
   * deployed controller refuses loopback names, which on a shared machine let one process impersonate another.
   */
  readonly loopbackRouters: boolean;
  readonly frontDoor: FrontDoor;
  /**
   * With the `alb` front door: the (lower-case) name the load balancer forwards the client's certificate chain under
   * (its listener's `routing.http.request.x_amzn_mtls_clientcert.header_name`). In Lambda it must be a name of the
   * deployment's own, unguessable: `shared/http/forwarded-certificate.ts` says why.
   */
  readonly albClientCertHeader: string;
  readonly pkiKeys: PkiKeyConfig;
  readonly secretKey: SecretKeyConfig;
  /** The issuer named in TOTP provisioning URLs (the reference's `edge.totp.hostname`). */
  readonly totpIssuer: string;
  /** The SPIFFE trust domain of issued certificates; undefined: derived from the network's root CA. */
  readonly trustDomain: string | undefined;
  /** The integrity run's Step Functions state machine (set by the stack for the database function). */
  readonly integrityStateMachineArn: string | undefined;
  /** Parallel scan segments of an integrity run. */
  readonly integritySegments: number;
  readonly snapshots: SnapshotConfig;
  /** Where the mTLS domain's truststore lives (set by the stack for the functions that publish it). */
  readonly truststore: TruststoreConfig | undefined;
  /** Login and enrollment attempts per fixed window, per source address and per username (0 = unlimited). */
  readonly loginRateLimit: LoginRateLimitConfig;
  readonly mfaRateLimit: MfaRateLimitConfig;
  /** External JWT signers' JWKS fetches. */
  readonly jwks: JwksConfig;
  readonly oidc: OidcConfig;
  /**
   * The CloudWatch namespace of the controller's metrics (`POWERTOOLS_METRICS_NAMESPACE`, which the stack sets on every
   * function); unset, no metrics are emitted: `npm start` and the tests print no EMF unless they name one.
   */
  readonly metricsNamespace: string | undefined;
  readonly requestLog: RequestLogConfig;
  readonly version: string;
  readonly revision: string;
  readonly buildDate: string;
}

/** A trust domain is a host-name-like label (SPIFFE: lowercase letters, digits, dots, hyphens, underscores). */
function trustDomainSetting(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^[a-z0-9._-]{1,255}$/.test(value)) {
    throw new Error(`TRUST_DOMAIN must be lowercase letters, digits, dots, hyphens or underscores, got "${value}"`);
  }
  return value;
}

function positiveInteger(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min)
    throw new Error(`${name} must be an integer >= ${min}, got "${value}"`);
  return parsed;
}

/** A transport address as routers read it (`tls:<host>:<port>`, an IPv6 host in brackets), or undefined when unset. */
function ctrlAddressSetting(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  const port = /^tls:(?:\[[0-9A-Fa-f:.]+\]|[^\s:[\]/]+):(\d{1,5})$/.exec(value)?.[1];
  if (port === undefined || Number(port) < 1 || Number(port) > 65_535)
    throw new Error(`CTRL_ADDRESS must be tls:<host>:<port>, got "${value}"`);
  return value;
}

function booleanSetting(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new Error(`${name} must be true or false, got "${value}"`);
}

function frontDoorSetting(value: string | undefined): FrontDoor {
  if (value === undefined || value === '' || value === 'rest-api') return 'rest-api';
  if (value === 'alb') return 'alb';
  throw new Error(`FRONT_DOOR must be rest-api or alb, got "${value}"`);
}

/** The least length of a certificate header name of the deployment's own: its unguessable part is the defence. */
export const MIN_SECRET_HEADER_NAME_LENGTH = 32;

/**
 * The certificate header's name. In Lambda behind the load balancer, a client could send a header of AWS's default
 * name itself (AWS does not say the load balancer removes it when no certificate was presented), so the name must be
 * one of the deployment's own: at least {@link MIN_SECRET_HEADER_NAME_LENGTH} characters, not an `X-Amzn-` name.
 * Locally the server that plays the load balancer strips client-sent certificate headers itself.
 */
function albClientCertHeaderSetting(env: NodeJS.ProcessEnv, frontDoor: FrontDoor): string {
  const name = (env.ALB_CLIENT_CERT_HEADER || ALB_CLIENT_CERT_HEADER).toLowerCase();
  if (!/^[a-z0-9-]{1,128}$/.test(name)) {
    throw new Error(`ALB_CLIENT_CERT_HEADER must be letters, digits and hyphens, got "${name}"`);
  }
  const unguessable = name.length >= MIN_SECRET_HEADER_NAME_LENGTH && !name.startsWith('x-amzn-');
  if (frontDoor === 'alb' && env.AWS_LAMBDA_FUNCTION_NAME && !unguessable) {
    throw new Error(
      `FRONT_DOOR=alb in Lambda needs ALB_CLIENT_CERT_HEADER, a header name of the deployment's own (at least ${MIN_SECRET_HEADER_NAME_LENGTH} characters, not X-Amzn-)`,
    );
  }
  return name;
}

/**
 * The public origin. In Lambda behind the load balancer it must be given: the load balancer passes on whatever `Host`
 * a client sent (API Gateway answers only its own domains), and the base URLs answered (`/version`, enrollment JWTs'
 * issuers) must not be the client's to choose. The stack always sets it (`cdk/front-door.ts` needs `domainName`).
 */
function publicBaseUrlSetting(env: NodeJS.ProcessEnv, frontDoor: FrontDoor): string | undefined {
  const url = env.PUBLIC_BASE_URL || undefined;
  if (frontDoor === 'alb' && env.AWS_LAMBDA_FUNCTION_NAME && url === undefined) {
    throw new Error("FRONT_DOOR=alb in Lambda needs PUBLIC_BASE_URL: the load balancer passes on the client's Host");
  }
  return url;
}

function pkiKeysOf(env: NodeJS.ProcessEnv): PkiKeyConfig {
  const rootCa = env.ROOT_CA_KEY_ID || undefined;
  const signingCa = env.SIGNING_CA_KEY_ID || undefined;
  const serverKeySecretArn = env.SERVER_KEY_SECRET_ARN || undefined;
  if (rootCa || signingCa || serverKeySecretArn) return { kind: 'kms', rootCa, signingCa, serverKeySecretArn };
  if (env.PKI_KEY_DIR) return { kind: 'files', directory: env.PKI_KEY_DIR };
  return env.AWS_LAMBDA_FUNCTION_NAME ? { kind: 'none' } : { kind: 'memory' };
}

function secretKeyOf(env: NodeJS.ProcessEnv): SecretKeyConfig {
  if (env.SECRET_KEY_ID) return { kind: 'kms', keyId: env.SECRET_KEY_ID };
  if (env.PKI_KEY_DIR) return { kind: 'files', directory: env.PKI_KEY_DIR };
  return env.AWS_LAMBDA_FUNCTION_NAME ? { kind: 'none' } : { kind: 'memory' };
}

/**
 * The version, git revision and build date a function bundle was stamped with at synth (esbuild `define`, see
 * `cdk/build-stamp.ts`); absent where the sources run unbundled (`npm start`, the tests).
 */
declare const ZITI_BUILD_STAMP: { readonly version: string; readonly revision: string; readonly buildDate: string };

function buildStamp(): Partial<typeof ZITI_BUILD_STAMP> {
  return typeof ZITI_BUILD_STAMP === 'object' && ZITI_BUILD_STAMP !== null ? ZITI_BUILD_STAMP : {};
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ControllerConfig {
  const stamp = buildStamp();
  const frontDoor = frontDoorSetting(env.FRONT_DOOR);
  return {
    tableName: env.TABLE_NAME || 'ziti-controller',
    dynamoDbEndpoint: env.DYNAMODB_ENDPOINT || undefined,
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    apiSessionTimeoutMinutes: positiveInteger('API_SESSION_TIMEOUT_MINUTES', env.API_SESSION_TIMEOUT_MINUTES, 30, 1),
    publicBaseUrl: publicBaseUrlSetting(env, frontDoor),
    mtlsBaseUrl: env.MTLS_BASE_URL ? new URL(env.MTLS_BASE_URL).origin : undefined,
    sdkBaseUrl: env.SDK_BASE_URL ? new URL(env.SDK_BASE_URL).origin : undefined,
    ctrlAddress: ctrlAddressSetting(env.CTRL_ADDRESS),
    ctrlChannelRecordDir: env.CTRL_CHANNEL_RECORD || undefined,
    loopbackRouters: false,
    frontDoor,
    albClientCertHeader: albClientCertHeaderSetting(env, frontDoor),
    pkiKeys: pkiKeysOf(env),
    secretKey: secretKeyOf(env),
    totpIssuer: env.TOTP_ISSUER || 'openziti.io',
    trustDomain: trustDomainSetting(env.TRUST_DOMAIN),
    integrityStateMachineArn: env.INTEGRITY_STATE_MACHINE_ARN || undefined,
    integritySegments: positiveInteger('INTEGRITY_SEGMENTS', env.INTEGRITY_SEGMENTS, 4, 1),
    snapshots: env.AWS_LAMBDA_FUNCTION_NAME
      ? { kind: 'backup' }
      : { kind: 'file', directory: env.SNAPSHOT_DIR || '.data/snapshots' },
    truststore: env.TRUSTSTORE_BUCKET
      ? {
          bucket: env.TRUSTSTORE_BUCKET,
          key: env.TRUSTSTORE_KEY || 'truststore.pem',
          domainName: env.MTLS_DOMAIN_NAME || undefined,
        }
      : undefined,
    loginRateLimit: {
      perIp: positiveInteger('LOGIN_RATE_LIMIT_PER_IP', env.LOGIN_RATE_LIMIT_PER_IP, 600, 0),
      perUsername: positiveInteger('LOGIN_RATE_LIMIT_PER_USERNAME', env.LOGIN_RATE_LIMIT_PER_USERNAME, 60, 0),
      perSourceAndUsername: positiveInteger(
        'LOGIN_RATE_LIMIT_PER_SOURCE_AND_USERNAME',
        env.LOGIN_RATE_LIMIT_PER_SOURCE_AND_USERNAME,
        10,
        0,
      ),
      windowSeconds: positiveInteger('LOGIN_RATE_LIMIT_WINDOW_SECONDS', env.LOGIN_RATE_LIMIT_WINDOW_SECONDS, 60, 1),
    },
    metricsNamespace: env.POWERTOOLS_METRICS_NAMESPACE || undefined,
    // Every line unless told: `npm start` and the tests see each request; the stack sets its own rate.
    requestLog: {
      sampleRate: positiveInteger('REQUEST_LOG_SAMPLE_RATE', env.REQUEST_LOG_SAMPLE_RATE, 1, 1),
      slowMs: positiveInteger('REQUEST_LOG_SLOW_MS', env.REQUEST_LOG_SLOW_MS, 1000, 0),
    },
    mfaRateLimit: {
      perIdentity: positiveInteger('MFA_RATE_LIMIT_PER_IDENTITY', env.MFA_RATE_LIMIT_PER_IDENTITY, 10, 0),
      perSourceAndIdentity: positiveInteger(
        'MFA_RATE_LIMIT_PER_SOURCE_AND_IDENTITY',
        env.MFA_RATE_LIMIT_PER_SOURCE_AND_IDENTITY,
        5,
        0,
      ),
      windowSeconds: positiveInteger('MFA_RATE_LIMIT_WINDOW_SECONDS', env.MFA_RATE_LIMIT_WINDOW_SECONDS, 600, 1),
    },
    oidc: {
      advertise: booleanSetting('OIDC_AUTH', env.OIDC_AUTH, false),
      accessTokenSeconds: positiveInteger('OIDC_ACCESS_TOKEN_SECONDS', env.OIDC_ACCESS_TOKEN_SECONDS, 1800, 10),
      refreshTokenSeconds: positiveInteger('OIDC_REFRESH_TOKEN_SECONDS', env.OIDC_REFRESH_TOKEN_SECONDS, 86_400, 60),
    },
    jwks: {
      timeoutMs: positiveInteger('JWKS_TIMEOUT_MS', env.JWKS_TIMEOUT_MS, 3000, 1),
      maxBytes: positiveInteger('JWKS_MAX_BYTES', env.JWKS_MAX_BYTES, 64 * 1024, 1024),
      cacheSeconds: positiveInteger('JWKS_CACHE_SECONDS', env.JWKS_CACHE_SECONDS, 300, 0),
      refetchCooldownSeconds: positiveInteger(
        'JWKS_REFETCH_COOLDOWN_SECONDS',
        env.JWKS_REFETCH_COOLDOWN_SECONDS,
        30,
        0,
      ),
      trustedCaPem: env.JWKS_TRUSTED_CA_PEM || undefined,
      allowPrivateAddresses: booleanSetting(
        'JWKS_ALLOW_PRIVATE_IPS',
        env.JWKS_ALLOW_PRIVATE_IPS,
        !env.AWS_LAMBDA_FUNCTION_NAME,
      ),
    },
    version: env.CONTROLLER_VERSION || stamp.version || 'v0.1.0',
    revision: env.CONTROLLER_REVISION || stamp.revision || 'unknown',
    buildDate: env.CONTROLLER_BUILD_DATE || stamp.buildDate || '1970-01-01T00:00:00Z',
  };
}
