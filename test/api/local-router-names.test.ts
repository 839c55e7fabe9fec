import { X509Certificate } from 'node:crypto';
import type { JsonGeneralNames } from '@peculiar/x509';
import { beforeAll, describe, expect, it } from 'vitest';
import { localServerNames } from '#local/server-tls.ts';
import { ensureServerCertificate } from '#shared/pki/server-certificate.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { csrFor, leafOf } from '../support/pki-fixtures.ts';

/**
 * A router beside `npm start`'s controller (`loopbackRouters`, which only `npm start` sets): its server certificate may
 * name 127.0.0.1 or ::1, which the local controller answers at too, so it needs no host name of its own (and nobody an
 * /etc/hosts edit). Nothing else a deployed controller refuses is let through (router-server-names.test.ts has the
 * deployed rules, loopback addresses refused).
 */
const { controller, call, createdId } = useAdminController({ loopbackRouters: true });
const C = '/edge/client/v1';

beforeAll(async () => {
  // The local controller's own certificate: its loopback names, 127.0.0.1 among them.
  await ensureServerCertificate(controller().deps, localServerNames({}));
});

async function enroll(token: string, names: JsonGeneralNames) {
  const client = await csrFor('router');
  const server = await csrFor('router', names);
  return controller().call('POST', `${C}/enroll/erott`, {
    body: { token, clientCsr: client.csr, serverCsr: server.csr },
  });
}

async function routerToken(name: string): Promise<string> {
  const routerId = await createdId('/edge-routers', { name });
  return (await call('GET', `/edge-routers/${routerId}`)).body.data.enrollmentToken;
}

describe("a router's server certificate beside npm start's controller", () => {
  it("may name 127.0.0.1 and ::1, the controller's own loopback addresses", async () => {
    const enrolled = await enroll(await routerToken('local-loopback'), [
      { type: 'ip', value: '127.0.0.1' },
      { type: 'ip', value: '::1' },
    ]);
    expect(enrolled.status, enrolled.text).toBe(200);
    const serverCert = new X509Certificate(leafOf(enrolled.body.data.serverCert));
    expect(serverCert.subjectAltName).toContain('IP Address:127.0.0.1');
  });

  it.each([
    ['the loopback name', 'dns', 'localhost'],
    ['a name under localhost', 'dns', 'router.localhost'],
    ['loopback as a host name', 'dns', '127.1'],
    ['the metadata address', 'ip', '169.254.169.254'],
    ['the unspecified address', 'ip', '0.0.0.0'],
  ] as const)('still refuses %s (%s:%s)', async (_case, type, value) => {
    const refused = await enroll(await routerToken(`local-${type}-${value}`), [{ type, value }]);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.error.code).toBe('COULD_NOT_PROCESS_CSR');
  });
});
