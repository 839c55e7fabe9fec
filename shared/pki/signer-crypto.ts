import { webcrypto } from 'node:crypto';
import type { Signer } from '../ports/signer.ts';

/** What @peculiar/x509 is told about a key it signs with but never sees. */
export const P256_SIGNING_ALGORITHM = { name: 'ECDSA', hash: 'SHA-256' } as const;

/** A stand-in CryptoKey naming the Signer's algorithm; its only use is to be handed back to `signerCrypto`'s sign. */
export const SIGNER_KEY = {
  algorithm: { name: 'ECDSA', namedCurve: 'P-256' },
  type: 'private',
  extractable: false,
  usages: ['sign'],
} as unknown as webcrypto.CryptoKey;

/**
 * A WebCrypto for @peculiar/x509 whose `sign` goes through the Signer (KMS in AWS) and whose every other operation
 * (digests for key identifiers, verification, random serial numbers) is node's.
 */
export function signerCrypto(signer: Signer): webcrypto.Crypto {
  const nodeSubtle = webcrypto.subtle as webcrypto.SubtleCrypto;
  const subtle = new Proxy(nodeSubtle, {
    get(target, property) {
      if (property === 'sign') {
        return async (_algorithm: unknown, _key: unknown, data: webcrypto.BufferSource) => {
          const bytes = ArrayBuffer.isView(data)
            ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
            : new Uint8Array(data);
          const signature = await signer.sign(bytes);
          return signature.buffer.slice(signature.byteOffset, signature.byteOffset + signature.byteLength);
        };
      }
      const value = Reflect.get(target, property) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    subtle,
    getRandomValues: <T extends ArrayBufferView | null>(array: T) => webcrypto.getRandomValues(array as never) as T,
    randomUUID: () => webcrypto.randomUUID(),
  } as unknown as webcrypto.Crypto;
}
