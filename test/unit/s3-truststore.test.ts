import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lazyS3Truststore } from '#shared/pki/create-truststore.ts';
import { s3Truststore } from '#shared/pki/s3-truststore.ts';

interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** A loopback endpoint answering S3's PutObject (with a version id) and API Gateway's UpdateDomainName. */
const received: Received[] = [];
let server: Server;
let endpoint: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      if (request.method === 'PUT') {
        response.writeHead(200, { 'x-amz-version-id': `v${received.length}`, etag: '"e"' }).end();
      } else {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ domainName: 'x' }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
});

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
const clients = () => ({
  s3: new S3Client({ region: 'eu-west-1', endpoint, forcePathStyle: true, credentials }),
  apiGateway: new APIGatewayClient({ region: 'eu-west-1', endpoint, credentials }),
});
const BUNDLE = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('the S3 truststore', () => {
  it('puts the bundle, then points the mTLS domain at the new object version', async () => {
    received.length = 0;
    const { s3, apiGateway } = clients();
    const truststore = s3Truststore(
      { bucket: 'trust-bucket', key: 'truststore.pem', domainName: 'mtls.example.com' },
      s3,
      apiGateway,
    );

    await truststore.publish(BUNDLE);

    expect(received).toHaveLength(2);
    const [put, patch] = received as [Received, Received];
    expect(put.method).toBe('PUT');
    expect(put.url.split('?')[0]).toBe('/trust-bucket/truststore.pem');
    expect(put.headers['content-type']).toBe('application/x-pem-file');
    expect(put.body).toBe(BUNDLE);
    expect(patch.method).toBe('PATCH');
    expect(patch.url).toBe('/domainnames/mtls.example.com');
    expect(JSON.parse(patch.body)).toEqual({
      patchOperations: [{ op: 'replace', path: '/mutualTlsAuthentication/truststoreVersion', value: 'v1' }],
    });
  });

  it('loads the AWS clients on the first publish when lazy (the pki function), then publishes the same way', async () => {
    received.length = 0;
    // The SDK's own endpoint override: the lazily made clients reach the loopback endpoint as they would AWS.
    const overrides = { AWS_ENDPOINT_URL: endpoint, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
    const saved = Object.fromEntries(Object.keys(overrides).map((name) => [name, process.env[name]]));
    Object.assign(process.env, overrides);
    try {
      const truststore = lazyS3Truststore(
        { bucket: 'trust-bucket', key: 'truststore.pem', domainName: 'mtls.example.com' },
        'eu-west-1',
      );
      expect(received).toHaveLength(0);
      await truststore.publish(BUNDLE);
      await truststore.publish(BUNDLE);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    expect(received.map((request) => request.method)).toEqual(['PUT', 'PATCH', 'PUT', 'PATCH']);
    expect(received[0]!.body).toBe(BUNDLE);
  });

  it('only puts the bundle when there is no domain yet (the bootstrap)', async () => {
    received.length = 0;
    const { s3, apiGateway } = clients();
    await s3Truststore(
      { bucket: 'trust-bucket', key: 'truststore.pem', domainName: undefined },
      s3,
      apiGateway,
    ).publish(BUNDLE);
    expect(received.map((request) => request.method)).toEqual(['PUT']);
  });
});
