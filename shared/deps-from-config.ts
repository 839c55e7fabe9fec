import { type ControllerConfig, loadConfig } from './config.ts';
import { createLogger, DEFAULT_SERVICE_NAME } from './log/logger.ts';
import { createMetrics } from './log/metrics.ts';
import { createSecretBox } from './mfa/create-secret-box.ts';
import { createSigners } from './pki/signers.ts';
import type { Deps } from './ports/deps.ts';
import { NO_STATE_MACHINE } from './ports/state-machine.ts';
import { NO_TRUSTSTORE } from './ports/truststore.ts';
import { createDocumentClient } from './store/dynamo-client.ts';
import { Store } from './store/entity-store.ts';

/**
 * The adapters the configuration names (AWS ones in Lambda and in the routers' endpoint, local ones for `npm start`
 * and the tests) wired into one `Deps`: what the functions' composition root (`functions/create-deps.ts`) and the
 * control channel endpoint's (`ctrl-channel/endpoint-deps.ts`) both build.
 */
export function depsFromConfig(config: ControllerConfig = loadConfig()): Deps {
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
