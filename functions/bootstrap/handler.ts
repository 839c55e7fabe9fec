import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { bootstrap } from '#shared/bootstrap.ts';
import { defaultDeps } from '#shared/deps.ts';
import { truststoreOf } from '#shared/pki/s3-truststore.ts';
import { truststoreBundle } from '#shared/pki/trusted-cas.ts';

const secrets = new SecretsManagerClient({});

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/**
 * Runs the idempotent bootstrap on every deploy (a CloudFormation custom resource behind the CDK Provider). The
 * default admin's password comes from the Secrets Manager secret the stack generates; it is never logged.
 */
export async function handler(event: CloudFormationCustomResourceEvent) {
  const physicalResourceId = 'controller-bootstrap';
  if (event.RequestType === 'Delete') return { PhysicalResourceId: physicalResourceId };
  const secret = await secrets.send(new GetSecretValueCommand({ SecretId: required('ADMIN_PASSWORD_SECRET_ARN') }));
  if (!secret.SecretString) throw new Error('the admin password secret has no string value');
  const deps = defaultDeps();
  const result = await bootstrap(deps, {
    adminUsername: process.env.ADMIN_USERNAME || 'admin',
    adminPassword: secret.SecretString,
  });
  // The mTLS domain is created after this resource, from the truststore published here.
  const truststore = deps.config.truststore;
  if (truststore) await truststoreOf(truststore, deps.config.region).publish(await truststoreBundle(deps));
  deps.logger.info('bootstrap finished', { adminCreated: result.adminCreated });
  return { PhysicalResourceId: physicalResourceId, Data: { adminCreated: String(result.adminCreated) } };
}
