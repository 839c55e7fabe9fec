/**
 * Where the network's three PKI keys live: KMS in AWS (key ids from the stack), key files under a directory for
 * `npm start`, process memory for tests, and nowhere in a function the stack gives no key (signing there fails loudly
 * instead of minting a throwaway key).
 */
export type PkiKeyConfig =
  | { readonly kind: 'kms'; readonly rootCa: string; readonly signingCa: string; readonly enrollment: string }
  | { readonly kind: 'files'; readonly directory: string }
  | { readonly kind: 'memory' }
  | { readonly kind: 'none' };

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
  readonly pkiKeys: PkiKeyConfig;
  readonly version: string;
  readonly revision: string;
  readonly buildDate: string;
}

function positiveInteger(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min)
    throw new Error(`${name} must be an integer >= ${min}, got "${value}"`);
  return parsed;
}

function pkiKeysOf(env: NodeJS.ProcessEnv): PkiKeyConfig {
  const ids = [env.ROOT_CA_KEY_ID, env.SIGNING_CA_KEY_ID, env.ENROLLMENT_KEY_ID];
  const [rootCa, signingCa, enrollment] = ids;
  if (rootCa && signingCa && enrollment) return { kind: 'kms', rootCa, signingCa, enrollment };
  if (ids.some(Boolean)) {
    throw new Error('ROOT_CA_KEY_ID, SIGNING_CA_KEY_ID and ENROLLMENT_KEY_ID must be set together');
  }
  if (env.PKI_KEY_DIR) return { kind: 'files', directory: env.PKI_KEY_DIR };
  return env.AWS_LAMBDA_FUNCTION_NAME ? { kind: 'none' } : { kind: 'memory' };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ControllerConfig {
  return {
    tableName: env.TABLE_NAME || 'ziti-controller',
    dynamoDbEndpoint: env.DYNAMODB_ENDPOINT || undefined,
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    apiSessionTimeoutMinutes: positiveInteger('API_SESSION_TIMEOUT_MINUTES', env.API_SESSION_TIMEOUT_MINUTES, 30, 1),
    publicBaseUrl: env.PUBLIC_BASE_URL || undefined,
    pkiKeys: pkiKeysOf(env),
    version: env.CONTROLLER_VERSION || 'v0.1.0',
    revision: env.CONTROLLER_REVISION || 'unknown',
    buildDate: env.CONTROLLER_BUILD_DATE || '1970-01-01T00:00:00Z',
  };
}
