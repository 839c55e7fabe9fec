import { P256_COORDINATE_BYTES } from '../ports/signer.ts';

/** A DER ECDSA signature that is not `SEQUENCE { INTEGER r, INTEGER s }` with both fitting the curve. */
export class MalformedSignatureError extends Error {}

/** Reads a DER length at `offset`: short form, or long form of one or two bytes (a signature never needs more). */
function readLength(der: Uint8Array, offset: number): { length: number; next: number } {
  const first = der[offset];
  if (first === undefined) throw new MalformedSignatureError('truncated length');
  if (first < 0x80) return { length: first, next: offset + 1 };
  const count = first & 0x7f;
  if (count === 0 || count > 2 || offset + 1 + count > der.length) throw new MalformedSignatureError('bad length');
  let length = 0;
  for (let i = 0; i < count; i++) length = length * 256 + der[offset + 1 + i]!;
  return { length, next: offset + 1 + count };
}

/** One positive INTEGER, left-padded (or stripped of its sign byte) to exactly `size` bytes. */
function readInteger(der: Uint8Array, offset: number, size: number): { value: Uint8Array; next: number } {
  if (der[offset] !== 0x02) throw new MalformedSignatureError('expected INTEGER');
  const { length, next } = readLength(der, offset + 1);
  const end = next + length;
  if (length === 0 || end > der.length) throw new MalformedSignatureError('bad INTEGER length');
  let bytes = der.subarray(next, end);
  if (bytes[0]! & 0x80) throw new MalformedSignatureError('negative INTEGER');
  while (bytes.length > 1 && bytes[0] === 0) bytes = bytes.subarray(1);
  if (bytes.length > size) throw new MalformedSignatureError('INTEGER larger than the curve');
  const value = new Uint8Array(size);
  value.set(bytes, size - bytes.length);
  return { value, next: end };
}

/**
 * KMS answers ECDSA signatures as DER `SEQUENCE { r, s }`, whose integers are 31 to 33 bytes (a leading zero when the
 * high bit is set, fewer bytes when r or s is small); JWS and WebCrypto want r‖s of fixed width.
 */
export function derToRawSignature(der: Uint8Array, size = P256_COORDINATE_BYTES): Uint8Array {
  if (der[0] !== 0x30) throw new MalformedSignatureError('expected SEQUENCE');
  const { length, next } = readLength(der, 1);
  if (next + length !== der.length) throw new MalformedSignatureError('SEQUENCE length does not match');
  const r = readInteger(der, next, size);
  const s = readInteger(der, r.next, size);
  if (s.next !== der.length) throw new MalformedSignatureError('trailing bytes');
  const raw = new Uint8Array(size * 2);
  raw.set(r.value, 0);
  raw.set(s.value, size);
  return raw;
}
