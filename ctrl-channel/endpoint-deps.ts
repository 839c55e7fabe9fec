import { type ControllerConfig, loadConfig } from '#shared/config.ts';
import { depsFromConfig } from '#shared/deps-from-config.ts';
import type { Deps } from '#shared/ports/deps.ts';

/**
 * The endpoint process's `Deps` (its ECS task on AWS): the table and the keys as the configuration names them, as the
 * functions' composition root builds them. It seals no stored secret (no key for it, rather than a throwaway one that
 * would lose what it sealed), starts no integrity run, publishes no truststore. `npm start` passes its own `Deps` to
 * the endpoint instead.
 */
export function createEndpointDeps(config: ControllerConfig = loadConfig()): Deps {
  return depsFromConfig({ ...config, secretKey: { kind: 'none' } });
}
