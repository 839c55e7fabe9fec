import { type ControllerConfig, loadConfig } from '#shared/config.ts';

/**
 * The bench logs in and enrolls hundreds of times a minute from one address on purpose: login throttling stays on as
 * deployed (each attempt counts its windows with the same UpdateItems), with limits above anything the bench reaches,
 * since the limits decide only when an attempt is refused, not what counting it costs.
 */
export const BENCH_LOGIN_LIMIT = 1_000_000_000;

/** The controller's settings for a bench table: the defaults, login throttling on (see `BENCH_LOGIN_LIMIT`). */
export function benchConfig(tableName: string, dynamoDbEndpoint: string): ControllerConfig {
  const defaults = loadConfig({});
  return {
    ...defaults,
    tableName,
    dynamoDbEndpoint,
    loginRateLimit: {
      perIp: BENCH_LOGIN_LIMIT,
      perUsername: BENCH_LOGIN_LIMIT,
      perSourceAndUsername: BENCH_LOGIN_LIMIT,
      windowSeconds: defaults.loginRateLimit.windowSeconds,
    },
    mfaRateLimit: {
      ...defaults.mfaRateLimit,
      perIdentity: BENCH_LOGIN_LIMIT,
      perSourceAndIdentity: BENCH_LOGIN_LIMIT,
    },
  };
}
