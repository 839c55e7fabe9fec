import { type ControllerConfig, loadConfig } from './config.ts';
import { NO_STATE_MACHINE, type StateMachine } from './integrity/state-machine.ts';
import { createLogger, type Logger } from './log/logger.ts';
import { createSecretBox } from './mfa/create-secret-box.ts';
import type { SecretBox } from './mfa/secret-box.ts';
import type { Signers } from './pki/signer.ts';
import { createSigners } from './pki/signers.ts';
import { NO_TRUSTSTORE, type Truststore } from './pki/truststore.ts';
import { createDocumentClient } from './store/dynamo-client.ts';
import { Store } from './store/entity-store.ts';

/** Everything outside the process a handler talks to, built once per cold start and passed to every operation. */
export interface Deps {
  readonly config: ControllerConfig;
  readonly store: Store;
  readonly logger: Logger;
  readonly now: () => Date;
  /** The network's PKI keys (KMS in AWS, local keys elsewhere). */
  readonly signers: Signers;
  /** Encrypts the secrets the table stores (KMS data keys in AWS, a local key elsewhere). */
  readonly secretBox: SecretBox;
  /** Starts integrity runs (Step Functions in AWS; `npm start` and the tests put the local runner here). */
  readonly stateMachine: StateMachine;
  /** Where the mTLS domain's trusted CAs are published (S3 for the pki function in AWS; nothing elsewhere). */
  readonly truststore: Truststore;
}

export function createDeps(config: ControllerConfig = loadConfig()): Deps {
  const logger = createLogger();
  return {
    config,
    store: new Store(createDocumentClient(config), config.tableName, logger),
    logger,
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
