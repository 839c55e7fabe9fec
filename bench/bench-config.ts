import { type ControllerConfig, loadConfig } from '#shared/config.ts';

/**
 * The controller's settings for a bench table: the defaults, with login throttling off, since the bench logs in
 * hundreds of times a minute from one address on purpose (the limiter's own cost is one UpdateItem per key).
 */
export function benchConfig(tableName: string, dynamoDbEndpoint: string): ControllerConfig {
  return {
    ...loadConfig({}),
    tableName,
    dynamoDbEndpoint,
    loginRateLimit: { perIp: 0, perUsername: 0, perSourceAndUsername: 0, windowSeconds: 60 },
  };
}
