import type { TruststoreConfig } from '../config.ts';
import type { Truststore } from '../ports/truststore.ts';

/**
 * The S3 truststore, with its AWS clients loaded on the first publish: publishing is rare (a CA verified or deleted),
 * and the S3 and API Gateway clients would otherwise be evaluated on every cold start of the pki function.
 */
export function lazyS3Truststore(config: TruststoreConfig, region: string): Truststore {
  let loaded: Promise<Truststore> | undefined;
  return {
    async publish(bundlePem) {
      loaded ??= import('./s3-truststore.ts').then((module) => module.truststoreOf(config, region));
      return (await loaded).publish(bundlePem);
    },
  };
}
