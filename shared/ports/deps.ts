import type { ControllerConfig } from '../config.ts';
import type { Logger } from '../log/logger.ts';
import type { ControllerMetrics } from '../log/metrics.ts';
import type { Store } from '../store/entity-store.ts';
import type { SecretBox } from './secret-box.ts';
import type { Signers } from './signer.ts';
import type { StateMachine } from './state-machine.ts';
import type { Truststore } from './truststore.ts';

/**
 * Everything outside the process a handler talks to, built once per cold start and passed to every operation. The
 * port only: the composition root that builds it (AWS adapters or local ones) is `functions/create-deps.ts`.
 */
export interface Deps {
  readonly config: ControllerConfig;
  readonly store: Store;
  readonly logger: Logger;
  /** Business metrics (CloudWatch EMF); off unless the configuration names a namespace. */
  readonly metrics: ControllerMetrics;
  readonly now: () => Date;
  /** The network's keys (CA keys in KMS and the server key's secret in AWS, local keys elsewhere). */
  readonly signers: Signers;
  /** Encrypts the secrets the table stores (KMS data keys in AWS, a local key elsewhere). */
  readonly secretBox: SecretBox;
  /** Starts integrity runs (Step Functions in AWS; `npm start` and the tests put the local runner here). */
  readonly stateMachine: StateMachine;
  /** Where the mTLS domain's trusted CAs are published (S3 for the pki function in AWS; nothing elsewhere). */
  readonly truststore: Truststore;
}
