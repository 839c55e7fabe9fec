import { createHash, createHmac, createSecretKey, type Hash, type Hmac, type KeyObject } from 'node:crypto';

/**
 * SHA-256 and HMAC-SHA-256 for the AWS SDK's SigV4 signer (the client's `sha256` setting), the same digests as the
 * SDK's own. Every DynamoDB request is signed with an HMAC keyed by the derived signing key, a byte array: Node 24
 * takes several times longer to key an HMAC with bytes than with a `KeyObject` (about 35 µs against 7), so bytes are
 * made a `KeyObject` first. A plain hash is digested once, as the signer does, not copied first as the SDK's is.
 */
export class NodeSha256 {
  private readonly key: string | KeyObject | undefined;
  private hash: Hash | Hmac;
  private finished = false;

  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.key = secret === undefined ? undefined : keyOf(secret);
    this.hash = this.started();
  }

  update(data: Uint8Array): void {
    if (this.finished) throw new Error('the hash was already digested');
    this.hash.update(data);
  }

  async digest(): Promise<Uint8Array> {
    this.finished = true;
    const digest = this.hash.digest();
    return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength);
  }

  reset(): void {
    this.hash = this.started();
    this.finished = false;
  }

  private started(): Hash | Hmac {
    return this.key === undefined ? createHash('sha256') : createHmac('sha256', this.key);
  }
}

function keyOf(secret: string | ArrayBuffer | ArrayBufferView): string | KeyObject {
  if (typeof secret === 'string') return secret;
  const bytes = ArrayBuffer.isView(secret)
    ? Buffer.from(secret.buffer, secret.byteOffset, secret.byteLength)
    : Buffer.from(secret);
  return createSecretKey(bytes);
}
