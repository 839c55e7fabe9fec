import { createPublicKey, generateKeyPairSync, randomUUID, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDeps } from '#functions/create-deps.ts';
import { ensureTable } from '#local/create-table.ts';
import { bootstrap } from '#shared/bootstrap.ts';
import { loadConfig } from '#shared/config.ts';
import { createLogger } from '#shared/log/logger.ts';
import { acmCertificateImporter } from '#shared/pki/acm-certificate-importer.ts';
import { SERVER_CERTIFICATE_TAG_KEY } from '#shared/pki/certificate-importer.ts';
import { ensureImportedServerCertificate } from '#shared/pki/imported-server-certificate.ts';
import { networkCa } from '#shared/pki/network-ca.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { CREDENTIALS, useLoopbackAcm } from '../support/loopback-acm.ts';
import { asTableUser, holdToTableGrants } from '../support/table-grants.ts';

const NAMES = ['ziti.example.com', 'ziti-mtls.example.com'];
const DAY_MS = 24 * 3600_000;

const acm = useLoopbackAcm();

/** A bootstrapped table of its own, a clock the test moves, and every log line kept. */
async function controller() {
  const base = createDeps({
    ...loadConfig({}),
    tableName: `import-${randomUUID()}`,
    dynamoDbEndpoint: inject('dynamoEndpoint'),
  });
  const logLines: string[] = [];
  let offsetMs = 0;
  const deps: Deps = {
    ...base,
    logger: createLogger({}, { level: 'debug', write: (line) => logLines.push(line) }),
    now: () => new Date(Date.now() + offsetMs),
  };
  await ensureTable(deps.store.db, deps.store.tableName);
  holdToTableGrants(deps.store.db);
  await asTableUser('bootstrap', () => bootstrap(deps, { adminUsername: 'admin', adminPassword: 'admin-password' }));
  const importer = acmCertificateImporter(acm().client(), 'ZitiController');
  return {
    deps,
    logLines,
    advanceDays: (days: number) => {
      offsetMs += days * DAY_MS;
    },
    // As the bootstrap function imports it, held to that function's grant on the table.
    ensure: (names: readonly string[] = NAMES) =>
      asTableUser('bootstrap', () => ensureImportedServerCertificate(deps, names, importer)),
  };
}

describe('the server certificate in ACM', () => {
  it('imports the server key and its certificate with the network CA chain once, tagged, and answers the ARN', async () => {
    const { deps, ensure } = await controller();

    const first = await ensure();

    expect(first.imported).toBe(true);
    expect(acm().received).toHaveLength(1);
    const [request] = acm().received;
    expect(first.certificateArn).toBe('arn:aws:acm:eu-west-1:123456789012:certificate/imported-1');
    expect(request?.certificateArn).toBeUndefined();
    expect(request?.tags).toEqual([{ Key: SERVER_CERTIFICATE_TAG_KEY, Value: 'ZitiController' }]);
    expect(request?.privateKeyPem).toBe(await deps.signers.server.privateKeyPem());
    const leaf = new X509Certificate(request?.certificatePem ?? '');
    expect(leaf.publicKey.equals(await deps.signers.server.publicKey())).toBe(true);
    expect(leaf.subjectAltName).toBe('DNS:ziti.example.com, DNS:ziti-mtls.example.com');
    const ca = await networkCa(deps);
    expect(request?.chainPem).toBe(`${ca.signingCertPem.trim()}\n${ca.rootCertPem.trim()}\n`);
    expect(leaf.checkIssued(new X509Certificate(ca.signingCertPem))).toBe(true);
  });

  it('imports nothing while the certificate has not changed', async () => {
    const { ensure, advanceDays } = await controller();
    const first = await ensure();
    advanceDays(300);

    const again = await ensure();

    expect(again).toEqual({ certificateArn: first.certificateArn, imported: false });
    expect(acm().received).toHaveLength(1);
  });

  it('re-imports a renewed certificate into the same ARN, untagged, when fewer than 30 days remain', async () => {
    const { ensure, advanceDays } = await controller();
    const first = await ensure();
    advanceDays(397 - 29);

    const renewed = await ensure();

    expect(renewed).toEqual({ certificateArn: first.certificateArn, imported: true });
    expect(acm().received).toHaveLength(2);
    const [original, reimport] = acm().received;
    expect(reimport?.certificateArn).toBe(first.certificateArn);
    expect(reimport?.tags).toBeUndefined();
    expect(reimport?.certificatePem).not.toBe(original?.certificatePem);
    expect(reimport?.privateKeyPem).toBe(original?.privateKeyPem);
    expect(await ensure()).toEqual({ certificateArn: first.certificateArn, imported: false });
    expect(acm().received).toHaveLength(2);
  });

  it('re-imports into the same ARN when the domain names change', async () => {
    const { ensure } = await controller();
    const first = await ensure(['ziti.example.com']);

    const widened = await ensure(NAMES);

    expect(widened).toEqual({ certificateArn: first.certificateArn, imported: true });
    expect(acm().received.map((request) => request.certificateArn)).toEqual([undefined, first.certificateArn]);
    expect(new X509Certificate(acm().received[1]?.certificatePem ?? '').subjectAltName).toContain(
      'ziti-mtls.example.com',
    );
  });

  it('never logs or answers the private key', async () => {
    const { ensure, logLines, advanceDays } = await controller();
    const results = [await ensure()];
    advanceDays(380);
    results.push(await ensure());

    expect(logLines.some((line) => line.includes('server certificate imported'))).toBe(true);
    for (const line of logLines) expect(line).not.toMatch(/PRIVATE KEY/);
    expect(JSON.stringify(results)).not.toMatch(/PRIVATE KEY/);
  });
});

describe("the bootstrap function's schedule event", () => {
  const keyDirectory = mkdtempSync(join(tmpdir(), 'bootstrap-keys-'));
  const environment = {
    TABLE_NAME: `renewal-${randomUUID()}`,
    DYNAMODB_ENDPOINT: inject('dynamoEndpoint'),
    PKI_KEY_DIR: keyDirectory,
    SERVER_NAMES: NAMES.join(','),
    SERVER_CERTIFICATE_TAG: 'ZitiController',
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    LOG_LEVEL: 'error',
  };
  const saved = Object.fromEntries(
    Object.keys({ ...environment, AWS_ENDPOINT_URL: '' }).map((name) => [name, process.env[name]]),
  );
  beforeAll(async () => {
    // The handler builds its clients and deps from the environment, as in Lambda; the SDK's endpoint override sends
    // its ACM calls to the loopback endpoint.
    Object.assign(process.env, environment, { AWS_ENDPOINT_URL: acm().endpoint });
    const deps = createDeps(loadConfig());
    await ensureTable(deps.store.db, environment.TABLE_NAME);
    await bootstrap(deps, { adminUsername: 'admin', adminPassword: 'admin-password' });
  });
  afterAll(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(keyDirectory, { recursive: true, force: true });
  });

  it('renews and imports the server certificate, then imports nothing while it has not changed', async () => {
    const { handler } = await import('#functions/bootstrap/handler.ts');

    const first = await handler({ renewServerCertificate: true });
    const second = await handler({ renewServerCertificate: true });

    expect(first).toEqual({ serverCertificateArn: expect.stringMatching(/^arn:aws:acm:/) });
    expect(second).toEqual(first);
    expect(acm().received).toHaveLength(1);
    expect(acm().received[0]?.tags).toEqual([{ Key: SERVER_CERTIFICATE_TAG_KEY, Value: 'ZitiController' }]);
  });

  it('imports a certificate for a rotated server key into the same ARN on its next run', async () => {
    const { handler } = await import('#functions/bootstrap/handler.ts');
    const before = await handler({ renewServerCertificate: true });
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    writeFileSync(join(keyDirectory, 'server.pem'), privateKey.export({ format: 'pem', type: 'pkcs8' }));

    const after = await handler({ renewServerCertificate: true });

    expect(after).toEqual(before);
    const reimport = acm().received.at(-1);
    expect(reimport?.certificateArn).toBe(before.serverCertificateArn);
    expect(new X509Certificate(reimport?.certificatePem ?? '').publicKey.equals(createPublicKey(privateKey))).toBe(
      true,
    );
  });

  it('answers a CloudFormation delete without touching the certificate', async () => {
    const { handler } = await import('#functions/bootstrap/handler.ts');

    const answer = await handler({ RequestType: 'Delete' } as Parameters<typeof handler>[0]);

    expect(answer).toEqual({ PhysicalResourceId: 'controller-bootstrap' });
    expect(acm().received).toHaveLength(0);
  });
});
