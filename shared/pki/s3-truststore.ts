import { APIGatewayClient, UpdateDomainNameCommand } from '@aws-sdk/client-api-gateway';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { TruststoreConfig } from '../config.ts';
import { traced } from '../log/tracing.ts';
import type { Truststore } from '../ports/truststore.ts';

/**
 * The truststore as an object in a versioned S3 bucket. API Gateway reads it when the domain is created or updated,
 * not when the object changes, so each publish then points the domain at the new object version.
 */
export function s3Truststore(config: TruststoreConfig, s3: S3Client, apiGateway: APIGatewayClient): Truststore {
  return {
    async publish(bundlePem) {
      const put = await s3.send(
        new PutObjectCommand({
          Bucket: config.bucket,
          Key: config.key,
          Body: bundlePem,
          ContentType: 'application/x-pem-file',
        }),
      );
      if (!config.domainName) return;
      if (!put.VersionId) throw new Error(`the truststore bucket ${config.bucket} is not versioned`);
      await apiGateway.send(
        new UpdateDomainNameCommand({
          domainName: config.domainName,
          patchOperations: [
            { op: 'replace', path: '/mutualTlsAuthentication/truststoreVersion', value: put.VersionId },
          ],
        }),
      );
    },
  };
}

/** The S3 truststore of a function the stack configured, built once per cold start. */
export function truststoreOf(config: TruststoreConfig, region: string): Truststore {
  return s3Truststore(config, traced(new S3Client({ region })), traced(new APIGatewayClient({ region })));
}
