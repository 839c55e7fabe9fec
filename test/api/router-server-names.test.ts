import { X509Certificate } from 'node:crypto';
import type { JsonGeneralNames } from '@peculiar/x509';
import { beforeAll, describe, expect, it } from 'vitest';
import { localServerNames } from '#local/server-tls.ts';
import { ensureServerCertificate } from '#shared/pki/server-certificate.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { csrFor, leafOf } from '../support/pki-fixtures.ts';

/** The controller's configured address (links, enrollment JWTs), as a custom domain sets it in AWS. */
const { controller, call, createdId } = useAdminController({ publicBaseUrl: 'https://ziti.example.test:1280' });
const C = '/edge/client/v1';

beforeAll(async () => {
  // A public name the controller's own certificate carries beside its loopback names (`CONTROLLER_PUBLIC_NAMES`).
  await ensureServerCertificate(controller().deps, localServerNames({ publicNames: ['ctrl.lab.test'] }));
});

/**
 * What a router listens on and may name: host names (one under the controller's domain), public, private and
 * carrier-grade NAT addresses, a public address through NAT64.
 */
const ROUTER_NAMES: JsonGeneralNames = [
  { type: 'dns', value: 'router.example.com' },
  { type: 'dns', value: 'edge-1.ziti.example.test' },
  { type: 'ip', value: '203.0.113.10' },
  { type: 'ip', value: '2001:db8::10' },
  { type: 'ip', value: '10.0.0.5' },
  { type: 'ip', value: '100.64.0.7' },
  { type: 'ip', value: '64:ff9b::cb00:710' },
];

/** Enrolls the router with its token and a server CSR asking for `names`. */
async function enroll(token: string, names: JsonGeneralNames) {
  const client = await csrFor('router');
  const server = await csrFor('router', names);
  return controller().call('POST', `${C}/enroll/erott`, {
    body: { token, clientCsr: client.csr, serverCsr: server.csr },
  });
}

describe("a router's server certificate", () => {
  it.each([
    ['the loopback name', 'dns', 'localhost'],
    ['the loopback name in capitals', 'dns', 'LocalHost'],
    ['a name under localhost', 'dns', 'router.localhost'],
    ['a metadata service name', 'dns', 'metadata.google.internal'],
    ["the controller's configured host", 'dns', 'ziti.example.test'],
    ["the controller's configured host in capitals", 'dns', 'Ziti.Example.TEST'],
    ["a name on the controller's certificate", 'dns', 'ctrl.lab.test'],
    ['the metadata address as a host name', 'dns', '169.254.169.254'],
    ['the metadata address in decimal', 'dns', '2852039166'],
    ['the metadata address in hex', 'dns', '0xa9fea9fe'],
    ['the metadata address in octal', 'dns', '0251.0376.0251.0376'],
    ['the metadata address dotted short', 'dns', '169.254.43518'],
    ['loopback dotted short', 'dns', '127.1'],
    ['loopback in hex and short', 'dns', '0x7f.1'],
    ['a name with a numeric last label that is no address', 'dns', 'router.123'],
    ['IPv4 loopback', 'ip', '127.0.0.1'],
    ['IPv6 loopback', 'ip', '::1'],
    ['IPv4-mapped loopback', 'ip', '::ffff:7f00:1'],
    ['the IPv4-compatible metadata address', 'ip', '::a9fe:a9fe'],
    ['the metadata address through NAT64', 'ip', '64:ff9b::a9fe:a9fe'],
  ] as const)(
    'refuses %s (%s:%s), naming it; the router then enrolls with its own names',
    async (_case, type, value) => {
      const routerId = await createdId('/edge-routers', { name: `er-${type}-${value}` });
      const token = (await call('GET', `/edge-routers/${routerId}`)).body.data.enrollmentToken;

      const refused = await enroll(token, [
        { type: 'dns', value: 'router.example.com' },
        { type, value },
      ]);
      const enrolled = await enroll(token, ROUTER_NAMES);

      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.error.code).toBe('COULD_NOT_PROCESS_CSR');
      expect(refused.body.error.cause.message).toContain(`'${value}'`);
      expect(enrolled.status, enrolled.text).toBe(200);
      const serverCert = new X509Certificate(leafOf(enrolled.body.data.serverCert));
      expect(serverCert.subjectAltName?.split(', ').filter((name) => !name.startsWith('URI:'))).toEqual([
        'DNS:router.example.com',
        'DNS:edge-1.ziti.example.test',
        'IP Address:203.0.113.10',
        'IP Address:2001:DB8:0:0:0:0:0:10',
        'IP Address:10.0.0.5',
        'IP Address:100.64.0.7',
        'IP Address:64:FF9B:0:0:0:0:CB00:710',
      ]);
    },
  );
});
