import { generateKeyPairSync } from 'node:crypto';
import { GetSecretValueCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
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
 * Makes the server key on the first deploy: a P-256 key generated here, inside the function, and written only to its
 * secret (encrypted under the customer key), never logged or returned. Later deploys keep it: a new key would
 * invalidate every outstanding enrollment JWT (README: rotating the server key).
 */
async function ensureServerKey(secretArn: string): Promise<void> {
  const current = await secrets.send(new GetSecretValueCommand({ SecretId: secretArn }));
  if (current.SecretString?.includes('PRIVATE KEY')) return;
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  await secrets.send(
    new PutSecretValueCommand({
      SecretId: secretArn,
      SecretString: String(privateKey.export({ format: 'pem', type: 'pkcs8' })),
    }),
  );
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
  await ensureServerKey(required('SERVER_KEY_SECRET_ARN'));
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
