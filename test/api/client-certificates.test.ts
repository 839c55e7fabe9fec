import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServerCertificate, type TlsMaterial } from '#local/tls-certificate.ts';
import { authenticators } from '#shared/entities/authenticator.ts';
import { startTestController, type TestController } from '../support/test-controller.ts';

let controller: TestController;
let admin: string;
let clientCertificate: TlsMaterial;
const M = '/edge/management/v1';

beforeAll(async () => {
  controller = await startTestController();
  admin = await controller.login();
  clientCertificate = await createServerCertificate(['device-1']);
});
afterAll(async () => {
  await controller.close();
});

describe('client certificates reach the handlers as API Gateway mTLS passes them', () => {
  it('logs in with method=cert when the presented certificate belongs to a cert authenticator', async () => {
    const created = await controller.call('POST', `${M}/identities`, {
      token: admin,
      body: { name: 'device-1', type: 'Device', isAdmin: false },
    });
    const identityId = created.body.data.id as string;
    const fingerprint = new X509Certificate(clientCertificate.cert).fingerprint.replaceAll(':', '').toLowerCase();
    const now = new Date().toISOString();
    // Cert authenticators are issued by enrollment (PKI); arrange one directly for this transport test.
    await controller.deps.store.transact(
      controller.deps.store.createOps(authenticators, {
        id: 'cert-auth-1',
        createdAt: now,
        updatedAt: now,
        tags: {},
        identityId,
        method: 'cert',
        certPem: clientCertificate.cert,
        fingerprint,
        isIssuedByNetwork: false,
      }),
    );

    const response = await controller.call('POST', '/edge/client/v1/authenticate?method=cert', {
      body: {},
      cert: clientCertificate,
    });

    expect(response.status).toBe(200);
    expect(response.body.data.identityId).toBe(identityId);
    expect(response.body.data.authenticatorId).toBe('cert-auth-1');
  });

  it('answers 401 INVALID_AUTH to method=cert without a certificate', async () => {
    const response = await controller.call('POST', '/edge/client/v1/authenticate?method=cert', { body: {} });

    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('INVALID_AUTH');
  });

  it('answers 401 INVALID_AUTH to a certificate no authenticator holds', async () => {
    const stranger = await createServerCertificate(['stranger']);

    const response = await controller.call('POST', '/edge/client/v1/authenticate?method=cert', {
      body: {},
      cert: stranger,
    });

    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('INVALID_AUTH');
  });

  it('does not require a certificate for anything else', async () => {
    const response = await controller.call('GET', '/version', { cert: clientCertificate });

    expect(response.status).toBe(200);
  });
});
