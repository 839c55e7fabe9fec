import { generateKeyPairSync } from 'node:crypto';
import { ACMClient } from '@aws-sdk/client-acm';
import {
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { createDeps } from '#functions/create-deps.ts';
import { bootstrap } from '#shared/bootstrap.ts';
import { traced } from '#shared/log/tracing.ts';
import { acmCertificateImporter } from '#shared/pki/acm-certificate-importer.ts';
import { ensureImportedServerCertificate } from '#shared/pki/imported-server-certificate.ts';
import { truststoreOf } from '#shared/pki/s3-truststore.ts';
import { truststoreBundle } from '#shared/pki/trusted-cas.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { isRotationEvent, type RotationEvent, rotateAdminPassword, type SecretVersions } from './rotation.ts';

const secrets = traced(new SecretsManagerClient({}));
const acm = traced(new ACMClient({}));

/** What the daily schedule sends: renew the server certificate if it is due, and import it again if it changed. */
export interface RenewServerCertificateEvent {
  readonly renewServerCertificate: true;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/**
 * Makes the server key on the first deploy: a P-256 key generated here, inside the function, and written only to its
 * secret (encrypted under the customer key), never logged or returned. Later deploys keep it: a new key would
 * invalidate every outstanding enrollment JWT (docs/aws.md: rotating the server key).
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
 * The server certificate for the custom domains (`SERVER_NAMES`, the plain domain first), imported into ACM when it
 * changed; answers its ARN, or undefined when the stack has no custom domain. The certificate outlives the stack, as
 * the table that remembers its ARN does.
 */
async function importServerCertificate(deps: Deps): Promise<string | undefined> {
  const names = (process.env.SERVER_NAMES ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.length === 0) return undefined;
  const importer = acmCertificateImporter(acm, required('SERVER_CERTIFICATE_TAG'));
  return (await ensureImportedServerCertificate(deps, names, importer)).certificateArn;
}

/** The admin password secret's versions, through Secrets Manager. */
const secretVersions: SecretVersions = {
  async stages(secretId) {
    const described = await secrets.send(new DescribeSecretCommand({ SecretId: secretId }));
    return { rotationEnabled: described.RotationEnabled === true, versions: described.VersionIdsToStages ?? {} };
  },
  async value(secretId, versionId, stage) {
    try {
      const answer = await secrets.send(
        new GetSecretValueCommand({ SecretId: secretId, VersionId: versionId, VersionStage: stage }),
      );
      return answer.SecretString;
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return undefined;
      throw error;
    }
  },
  async putPending(secretId, versionId, value) {
    await secrets.send(
      new PutSecretValueCommand({
        SecretId: secretId,
        ClientRequestToken: versionId,
        SecretString: value,
        VersionStages: ['AWSPENDING'],
      }),
    );
  },
  async makeCurrent(secretId, versionId, fromVersionId) {
    await secrets.send(
      new UpdateSecretVersionStageCommand({
        SecretId: secretId,
        VersionStage: 'AWSCURRENT',
        MoveToVersionId: versionId,
        ...(fromVersionId ? { RemoveFromVersionId: fromVersionId } : {}),
      }),
    );
  },
};

/**
 * The bootstrap runs a few times a day at most, so each run reads the keys anew rather than keep them in a warm
 * instance: a server key rotated in its secret is the one the next run issues and imports the certificate for.
 */
const freshDeps = (): Deps => createDeps();

/** What a deploy answers CloudFormation (through the provider). */
interface CustomResourceAnswer {
  readonly PhysicalResourceId: string;
  readonly Data?: Record<string, string>;
}

/** Renews the server certificate if due: the daily schedule's event. */
async function renew(): Promise<{ serverCertificateArn: string | null }> {
  const certificateArn = await importServerCertificate(freshDeps());
  return { serverCertificateArn: certificateArn ?? null };
}

/** One step of the admin password's rotation. */
async function rotate(event: RotationEvent): Promise<void> {
  await rotateAdminPassword(event, {
    deps: freshDeps(),
    secrets: secretVersions,
    adminSecretArn: required('ADMIN_PASSWORD_SECRET_ARN'),
  });
}

/** A deploy: seeds the table, publishes the truststore and imports the server certificate. */
async function deploy(event: CloudFormationCustomResourceEvent): Promise<CustomResourceAnswer> {
  const physicalResourceId = 'controller-bootstrap';
  if (event.RequestType === 'Delete') return { PhysicalResourceId: physicalResourceId };
  const secret = await secrets.send(new GetSecretValueCommand({ SecretId: required('ADMIN_PASSWORD_SECRET_ARN') }));
  if (!secret.SecretString) throw new Error('the admin password secret has no string value');
  await ensureServerKey(required('SERVER_KEY_SECRET_ARN'));
  const deps = freshDeps();
  // A deploy that names another admin than the one the table has fails with the reason, rather than leaving the
  // stack's AdminUsername output wrong.
  const result = await bootstrap(deps, {
    adminUsername: process.env.ADMIN_USERNAME || 'admin',
    adminPassword: secret.SecretString,
    otherAdminUsername: 'refuse',
  });
  // The mTLS domain is created after this resource, from the truststore published here.
  const truststore = deps.config.truststore;
  if (truststore) await truststoreOf(truststore, deps.config.region).publish(await truststoreBundle(deps));
  // The custom domains are created after this resource, with the certificate answered here.
  const serverCertificateArn = await importServerCertificate(deps);
  deps.logger.info('bootstrap finished', { adminCreated: result.adminCreated, serverCertificateArn });
  return {
    PhysicalResourceId: physicalResourceId,
    Data: {
      adminCreated: String(result.adminCreated),
      ...(serverCertificateArn ? { ServerCertificateArn: serverCertificateArn } : {}),
    },
  };
}

/**
 * Runs the idempotent bootstrap on every deploy (a CloudFormation custom resource behind the CDK Provider), the
 * server certificate's renewal every day (an EventBridge schedule), and the rotation of the admin password secret
 * (Secrets Manager, a step per call). The default admin's password comes from the Secrets Manager secret the stack
 * generates; it, like the server key, is never logged or returned.
 */
export function handler(event: RotationEvent): Promise<void>;
export function handler(event: RenewServerCertificateEvent): Promise<{ serverCertificateArn: string | null }>;
export function handler(event: CloudFormationCustomResourceEvent): Promise<CustomResourceAnswer>;
export async function handler(
  event: CloudFormationCustomResourceEvent | RenewServerCertificateEvent | RotationEvent,
): Promise<unknown> {
  if (isRotationEvent(event)) return rotate(event);
  if ('RequestType' in event) return deploy(event);
  if (event.renewServerCertificate !== true) throw new Error('the bootstrap does not know this event');
  return renew();
}
