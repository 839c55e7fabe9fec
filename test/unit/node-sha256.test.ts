import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';
import { createDocumentClient } from '#shared/store/dynamo-client.ts';
import { NodeSha256 } from '#shared/store/node-sha256.ts';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

async function digestOf(secret: string | Uint8Array | undefined, data: string): Promise<string> {
  const hash = new NodeSha256(secret);
  hash.update(new TextEncoder().encode(data));
  return hex(await hash.digest());
}

describe('the SHA-256 the DynamoDB client signs with', () => {
  it('gives the standard digests: SHA-256, and HMAC-SHA-256 keyed by text and by bytes (RFC 4231)', async () => {
    expect(await digestOf(undefined, 'abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(await digestOf('Jefe', 'what do ya want for nothing?')).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
    expect(await digestOf(new Uint8Array(20).fill(0x0b), 'Hi There')).toBe(
      'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
    );
    const reused = new NodeSha256(new Uint8Array(20).fill(0x0b));
    reused.update(new TextEncoder().encode('ignored'));
    reused.reset();
    reused.update(new TextEncoder().encode('Hi There'));
    expect(hex(await reused.digest())).toBe('b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7');
  });

  it('signs as SigV4 says (the AWS test suite request get-vanilla), and the store client signs with it', async () => {
    const signer = new SignatureV4({
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
      region: 'us-east-1',
      service: 'service',
      sha256: NodeSha256,
      // The test suite's requests carry no payload hash header.
      applyChecksum: false,
    });
    const signed = await signer.sign(
      {
        method: 'GET',
        protocol: 'https:',
        hostname: 'example.amazonaws.com',
        path: '/',
        headers: { host: 'example.amazonaws.com' },
      },
      { signingDate: new Date('2015-08-30T12:36:00Z') },
    );
    expect(signed.headers.authorization).toContain(
      'Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );

    const client = createDocumentClient({ ...loadConfig({}), dynamoDbEndpoint: 'http://127.0.0.1:9' });
    try {
      expect(client.config.sha256).toBe(NodeSha256);
    } finally {
      client.destroy();
    }
  });
});
