import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ACMClient } from '@aws-sdk/client-acm';
import { afterAll, beforeAll, beforeEach } from 'vitest';

/** One ImportCertificate request as ACM received it, its blobs decoded from the JSON protocol's base64. */
export interface ReceivedImport {
  readonly target: string | undefined;
  readonly certificatePem: string;
  readonly privateKeyPem: string;
  readonly chainPem: string;
  readonly certificateArn: unknown;
  readonly tags: unknown;
}

export interface LoopbackAcm {
  readonly endpoint: string;
  readonly received: ReceivedImport[];
  /** A client of the real SDK that reaches this endpoint. */
  client(): ACMClient;
  /** What the next imports are answered with (by default an ARN per new import, the named one on re-import). */
  answerWith(body: Record<string, unknown> | undefined): void;
  close(): void;
}

export const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' };

const decoded = (value: unknown) => (value === undefined ? '' : Buffer.from(String(value), 'base64').toString('utf8'));

/**
 * A loopback endpoint answering ACM's ImportCertificate (JSON 1.1) as ACM does: a new ARN for a new import, the same
 * ARN for a re-import.
 */
export async function startLoopbackAcm(): Promise<LoopbackAcm> {
  const received: ReceivedImport[] = [];
  let fixed: Record<string, unknown> | undefined;
  const server = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk) => {
      raw += chunk;
    });
    request.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      received.push({
        target: request.headers['x-amz-target'] as string | undefined,
        certificatePem: decoded(body.Certificate),
        privateKeyPem: decoded(body.PrivateKey),
        chainPem: decoded(body.CertificateChain),
        certificateArn: body.CertificateArn,
        tags: body.Tags,
      });
      const arn = body.CertificateArn ?? `arn:aws:acm:eu-west-1:123456789012:certificate/imported-${received.length}`;
      response
        .writeHead(200, { 'content-type': 'application/x-amz-json-1.1' })
        .end(JSON.stringify(fixed ?? { CertificateArn: arn }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint,
    received,
    client: () => new ACMClient({ region: 'eu-west-1', endpoint, credentials: CREDENTIALS }),
    answerWith(body) {
      fixed = body;
    },
    close() {
      server.close();
    },
  };
}

/**
 * A loopback ACM for the tests of one file: started before them, closed after, and before each test emptied of what
 * it received and back to its default answers. Call at the top level; the getter answers it inside tests.
 */
export function useLoopbackAcm(): () => LoopbackAcm {
  let acm: LoopbackAcm | undefined;
  beforeAll(async () => {
    acm = await startLoopbackAcm();
  });
  afterAll(() => acm?.close());
  beforeEach(() => {
    acm?.received.splice(0);
    acm?.answerWith(undefined);
  });
  return () => {
    if (!acm) throw new Error('the loopback ACM is started before the tests');
    return acm;
  };
}
