import type { IncomingMessage } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ALBEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toAlbEvent } from '#local/alb-event.ts';
import { httpsCall } from '../support/https-client.ts';
import { issue, makeCa, type TestCa } from '../support/pki-fixtures.ts';

let ca: TestCa;
let origin: string;
let close: () => Promise<void>;

/** A listener that answers every request with the target event the local server would build for it. */
beforeAll(async () => {
  ca = await makeCa('local alb test ca');
  const serverLeaf = await issue(ca, 'localhost', { clientAuth: false, names: [{ type: 'dns', value: 'localhost' }] });
  const server = createServer(
    { key: serverLeaf.key, cert: serverLeaf.cert, requestCert: true, rejectUnauthorized: false },
    (request: IncomingMessage, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const event = toAlbEvent({
          request,
          url: new URL(request.url ?? '/', 'https://localhost'),
          body: Buffer.concat(chunks),
          authority: 'localhost:443',
          certificateHeader: 'x-amzn-mtls-clientcert',
        });
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(event));
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://localhost:${(server.address() as AddressInfo).port}`;
  close = () => new Promise((resolve) => server.close(() => resolve()));
});
afterAll(() => close());

describe("the local server's load balancer event", () => {
  it("forwards the handshake's certificate URL-encoded, and strips the certificate headers a client sends itself", async () => {
    const client = await issue(ca, 'alb-client');
    const response = await httpsCall(origin, ca.pem, 'POST', '/edge/client/v1/authenticate?method=cert', {
      body: {},
      cert: client,
      headers: { 'X-Amzn-Mtls-Clientcert': 'forged', 'X-Amzn-Mtls-Clientcert-Leaf': 'forged' },
    });
    const event = response.body as ALBEvent;

    expect(event.requestContext.elb.targetGroupArn).toMatch(/^arn:aws:elasticloadbalancing:/);
    const [forwarded, ...more] = event.multiValueHeaders?.['x-amzn-mtls-clientcert'] ?? [];
    expect(more).toEqual([]);
    // URL-encoded "with +=/ as safe characters": the PEM's newlines and spaces encoded, its base64 left as it is; the
    // leaf first.
    expect(forwarded).toMatch(/^(-----BEGIN%20CERTIFICATE-----%0A[A-Za-z0-9+/=%]+-----END%20CERTIFICATE-----%0A)+$/);
    expect(decodeURIComponent(forwarded!).startsWith(`${client.cert.trim()}\n`)).toBe(true);
    expect(event.multiValueHeaders?.['x-amzn-mtls-clientcert-leaf']).toBeUndefined();
  });

  it('sends no certificate header when the handshake had none, whatever the client sent', async () => {
    const response = await httpsCall(origin, ca.pem, 'GET', '/edge/client/v1/version', {
      headers: { 'X-Amzn-Mtls-Clientcert': 'forged' },
    });

    expect((response.body as ALBEvent).multiValueHeaders?.['x-amzn-mtls-clientcert']).toBeUndefined();
  });

  it('appends the client address to X-Forwarded-For and passes the query and a non-text body as the ALB does', async () => {
    const response = await httpsCall(
      origin,
      ca.pem,
      'POST',
      '/edge/client/v1/enroll?method=ott&token=a%2Bb+c&x=1&x=2',
      {
        rawBody: 'PEM',
        headers: { 'content-type': 'application/x-pem-file', 'X-Forwarded-For': '203.0.113.5' },
      },
    );
    const event = response.body as ALBEvent;

    expect(event.multiValueHeaders?.['x-forwarded-for']).toEqual(['203.0.113.5, 127.0.0.1']);
    expect(event.multiValueQueryStringParameters).toEqual({ method: ['ott'], token: ['a%2Bb+c'], x: ['1', '2'] });
    expect(event).toMatchObject({ httpMethod: 'POST', path: '/edge/client/v1/enroll', isBase64Encoded: true });
    expect(Buffer.from(event.body ?? '', 'base64').toString()).toBe('PEM');
  });
});
