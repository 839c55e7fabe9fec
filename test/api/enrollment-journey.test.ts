import { randomUUID, webcrypto } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { useAdminController } from '../support/admin-controller.ts';
import { csrFor, leafOf } from '../support/pki-fixtures.ts';

const { controller, call, createdId } = useAdminController();

/**
 * The "done when": a client that knows only the controller's URL and holds an enrollment JWT verifies the JWT
 * and the controller through the JWKS and the challenge, enrolls, logs in with its certificate and extends it; a
 * router does the same with its JWT.
 */
describe('a client that knows only the controller URL', () => {
  /** What an SDK does with a JWT: trust it only once the issuer's JWKS verifies it and the issuer proves its key. */
  async function verifiedClaims(jwt: string) {
    const { iss } = decodeJwt(jwt);
    expect(iss).toBe(controller().origin);
    const base = `${iss}/edge/client/v1`.replace(controller().origin, '');
    const jwks = await controller().call('GET', `${base}/enroll/jwks`);
    const { payload } = await jwtVerify(jwt, createLocalJWKSet(jwks.body), { issuer: iss });
    // The challenge: a fresh nonce the controller signs with the key the JWT names.
    const { kid } = decodeProtectedHeader(jwt);
    const nonce = randomUUID();
    const challenge = await controller().call('POST', `${base}/enroll/challenge`, { body: { keyId: kid, nonce } });
    expect(challenge.status, challenge.text).toBe(200);
    const jwk = jwks.body.keys.find((key: { kid: string }) => key.kid === kid);
    const key = await importJWK(jwk, 'ES256');
    const signature = Buffer.from(challenge.body.signature, 'base64url');
    const verified = await webcrypto.subtle.verify(
      { name: 'ECDSA', hash: 'SHA-256' },
      key as webcrypto.CryptoKey,
      signature,
      new TextEncoder().encode(nonce),
    );
    expect(verified).toBe(true);
    return { payload, base, caPool: challenge.body.caPool as string };
  }

  it('enrolls an identity from its JWT, logs in with the certificate, and extends it', async () => {
    const id = await createdId('/identities', {
      name: 'journey',
      type: 'Device',
      isAdmin: false,
      enrollment: { ott: true },
    });
    const jwt = (await call('GET', `/identities/${id}`)).body.data.enrollment.ott.jwt as string;

    const { payload, base, caPool } = await verifiedClaims(jwt);
    expect(payload).toMatchObject({ em: 'ott', sub: id });
    expect(caPool).toContain('BEGIN CERTIFICATE');
    const { csr, key } = await csrFor(String(payload.sub));
    const enrolled = await controller().call('POST', `${base}/enroll?method=${payload.em}&token=${payload.jti}`, {
      rawBody: csr,
      headers: { 'content-type': 'application/x-pem-file' },
    });
    expect(enrolled.status, enrolled.text).toBe(200);
    const credentials = { key, cert: leafOf(enrolled.body.data.cert) };

    const login = await controller().call('POST', `${base}/authenticate?method=cert`, { body: {}, cert: credentials });
    expect(login.status, login.text).toBe(200);
    expect(login.body.data.isCertExtendable).toBe(true);
    const token = login.body.data.token;
    const authenticatorId = login.body.data.authenticatorId;
    const next = await csrFor(String(payload.sub));
    const extended = await controller().call(
      'POST',
      `${base}/current-identity/authenticators/${authenticatorId}/extend`,
      { token, cert: credentials, body: { clientCertCsr: next.csr } },
    );
    const clientCert = leafOf(extended.body.data.clientCert);
    const verified = await controller().call(
      'POST',
      `${base}/current-identity/authenticators/${authenticatorId}/extend-verify`,
      { token, cert: credentials, body: { clientCert } },
    );
    expect(verified.status, verified.text).toBe(200);
    const again = await controller().call('POST', `${base}/authenticate?method=cert`, {
      body: {},
      cert: { key: next.key, cert: clientCert },
    });
    expect(again.status, again.text).toBe(200);
  });

  it('enrolls an edge router and a transit router from their JWTs', async () => {
    for (const [path, method] of [
      ['/edge-routers', 'erott'],
      ['/transit-routers', 'trott'],
    ] as const) {
      const routerId = await createdId(path, { name: `journey-${method}` });
      const jwt = (await call('GET', `${path}/${routerId}`)).body.data.enrollmentJwt as string;
      const { payload, base } = await verifiedClaims(jwt);
      expect(payload).toMatchObject({ em: method, sub: routerId });
      const client = await csrFor(routerId);
      const server = await csrFor(routerId);

      const enrolled = await controller().call('POST', `${base}/enroll?method=${payload.em}&token=${payload.jti}`, {
        body: { certCsr: client.csr, serverCertCsr: server.csr },
      });

      expect(enrolled.status, `${method}: ${enrolled.text}`).toBe(200);
      expect(Object.keys(enrolled.body.data).sort()).toEqual(['ca', 'cert', 'serverCert']);
      expect((await call('GET', `${path}/${routerId}`)).body.data).toMatchObject({
        isVerified: true,
        enrollmentJwt: null,
      });
    }
  });
});
