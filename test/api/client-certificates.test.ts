import { X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createServerCertificate, type TlsMaterial } from '#local/tls-certificate.ts';
import { authenticators } from '#shared/entities/authenticator.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { dynamoDbTracker } from '../support/dynamodb-tracker.ts';
import { M } from '../support/management-fixtures.ts';
import { issue, makeCa } from '../support/pki-fixtures.ts';

const { controller, admin, call, createdId } = useAdminController();
let clientCertificate: TlsMaterial;

beforeAll(async () => {
  clientCertificate = await createServerCertificate(['device-1']);
});

describe('client certificates reach the handlers as API Gateway mTLS passes them', () => {
  it('logs in with method=cert when the presented certificate belongs to a cert authenticator', async () => {
    const identityId = await createdId('/identities', { name: 'device-1', type: 'Device', isAdmin: false });
    // A verified third-party CA issued the device's certificate; the admin registers it as the identity's.
    const ca = await makeCa('transport root');
    const caId = await createdId('/cas', {
      name: 'transport',
      certPem: ca.pem,
      isAutoCaEnrollmentEnabled: false,
      isOttCaEnrollmentEnabled: false,
      isAuthEnabled: true,
      identityRoles: [],
    });
    const token = (await call('GET', `/cas/${caId}`)).body.data.verificationToken;
    const proof = await issue(ca, token);
    await controller().call('POST', `${M}/cas/${caId}/verify`, {
      token: admin(),
      rawBody: proof.cert,
      headers: { 'content-type': 'text/plain' },
    });
    const device = await issue(ca, 'device-1');
    const authenticatorId = await createdId('/authenticators', { identityId, method: 'cert', certPem: device.cert });

    let response = await controller().call('POST', '/edge/client/v1/authenticate?method=cert', {
      body: {},
      cert: device,
    });
    // Its CN names no identity, so the login reads step by step from what its first wave read (the fingerprint's marker
    // and the default auth policy, beside the counter and the index query): the authenticator; the identity, its MFA
    // and both revocations in one batch; the CA the authenticator chains to; the transaction.
    const trips = await dynamoDbTracker(controller().deps.store.db).measure(async () => {
      response = await controller().call('POST', '/edge/client/v1/authenticate?method=cert', {
        body: {},
        cert: device,
      });
    });

    expect(response.status, response.text).toBe(200);
    expect(response.body.data.identityId).toBe(identityId);
    expect(response.body.data.authenticatorId).toBe(authenticatorId);
    expect(trips).toEqual({ waves: 5, requests: 7 });
  });

  it('answers 401 to a certificate an authenticator holds that chains to no CA the network trusts', async () => {
    const identityId = await createdId('/identities', { name: 'device-2', type: 'Device', isAdmin: false });
    const fingerprint = new X509Certificate(clientCertificate.cert).fingerprint.replaceAll(':', '').toLowerCase();
    const now = new Date().toISOString();
    // Arranged in the store, as the API refuses to register such a certificate.
    await controller().deps.store.transact(
      controller().deps.store.createOps(authenticators, {
        id: 'cert-auth-self-signed',
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

    const response = await controller().call('POST', '/edge/client/v1/authenticate?method=cert', {
      body: {},
      cert: clientCertificate,
    });

    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('INVALID_AUTH');
  });

  it('answers 401 INVALID_AUTH to method=cert without a certificate', async () => {
    const response = await controller().call('POST', '/edge/client/v1/authenticate?method=cert', { body: {} });

    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('INVALID_AUTH');
  });

  it('answers 401 INVALID_AUTH to a certificate no authenticator holds', async () => {
    const stranger = await createServerCertificate(['stranger']);

    const response = await controller().call('POST', '/edge/client/v1/authenticate?method=cert', {
      body: {},
      cert: stranger,
    });

    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('INVALID_AUTH');
  });

  it('does not require a certificate for anything else', async () => {
    const response = await controller().call('GET', '/version', { cert: clientCertificate });

    expect(response.status).toBe(200);
  });
});
