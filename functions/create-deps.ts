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
 * The composition root: the adapters the configuration names (AWS ones in Lambda, local ones for `npm start` and the
 * tests) wired into one `Deps`. It sits above `shared/`, which only knows the port.
 */
export function createDeps(config: ControllerConfig = loadConfig()): Deps {
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
    secretBox: createSecretBox(config),
    // Only the database function starts runs; it puts Step Functions here (so no other bundle carries the client).
    stateMachine: NO_STATE_MACHINE,
    // Only the pki function publishes the truststore (CA verify and delete); it puts the S3 one here.
    truststore: NO_TRUSTSTORE,
  };
}

let cached: Deps | undefined;

/** The cold-start singleton; built on first use, never at import time. */
export function defaultDeps(): Deps {
  cached ??= createDeps();
  return cached;
}
