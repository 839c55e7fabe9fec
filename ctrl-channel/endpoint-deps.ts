import { type ControllerConfig, loadConfig } from '#shared/config.ts';
import { createLogger, DEFAULT_SERVICE_NAME } from '#shared/log/logger.ts';
import { createMetrics } from '#shared/log/metrics.ts';
import { createSecretBox } from '#shared/mfa/create-secret-box.ts';
import { createSigners } from '#shared/pki/signers.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { NO_STATE_MACHINE } from '#shared/ports/state-machine.ts';
import { NO_TRUSTSTORE } from '#shared/ports/truststore.ts';
import { createDocumentClient } from '#shared/store/dynamo-client.ts';
import { Store } from '#shared/store/entity-store.ts';

/**
 * The endpoint process's `Deps` (its ECS task on AWS): the table and the keys as the configuration names them, as the
 * functions' composition root builds them, and nothing the endpoint does not use. It seals no stored secret (no key
 * for it, rather than a throwaway one that would lose what it sealed), starts no integrity run, publishes no
 * truststore. `npm start` passes its own `Deps` to the endpoint instead.
 */
export function createEndpointDeps(config: ControllerConfig = loadConfig()): Deps {
  const logger = createLogger();
  return {
    config,
    store: new Store(createDocumentClient(config), config.tableName, logger),
    logger,
    metrics: createMetrics(
      config.metricsNamespace,
      process.env.POWERTOOLS_SERVICE_NAME ?? DEFAULT_SERVICE_NAME,
      logger,
    ),
    now: () => new Date(),
    signers: createSigners(config),
    secretBox: createSecretBox({ ...config, secretKey: { kind: 'none' } }),
    stateMachine: NO_STATE_MACHINE,
    truststore: NO_TRUSTSTORE,
  };
}
