import type { ChannelMessage } from './message.ts';

/**
 * The channel's v2 wire format, the one version the reference routers speak (v3's magic exists only in the
 * reference's tests): a 20-byte prelude, then the headers, then the body, little-endian throughout.
 *
 *   magic 03 06 09 0c | content type int32 | sequence int32 | headers length int32 | body length int32
 *   headers: (key int32 | length int32 | bytes)*, each key at most once | body
 *
 * A peer that opens with another magic is answered with the unknown-version reply (magic 03 06 09 0a, a count and
 * the versions spoken, here 2) so a dialer that tried a newer version can retry with v2, then closed.
 */
export const MAGIC_V2 = Buffer.from([0x03, 0x06, 0x09, 0x0c]);
const MAGIC_UNKNOWN_VERSION = Buffer.from([0x03, 0x06, 0x09, 0x0a]);
const PRELUDE_BYTES = 20;
const HEADER_META_BYTES = 8;

/** The largest message this side reads; a peer that announces more is cut off before anything is buffered. */
export interface FrameLimits {
  readonly maxHeadersBytes: number;
  readonly maxHeaderCount: number;
  readonly maxBodyBytes: number;
}

/**
 * The bounds on what a router may send. The reference reads a hello of at most 16 KiB of headers and 4,192 bytes of
 * body, and any later message unbounded; here every message is bounded: a router's own messages (terminators,
 * circuit requests, metrics) are a few kilobytes, so 4 MiB leaves room without letting one peer pin memory.
 */
export const ROUTER_FRAME_LIMITS: FrameLimits = {
  maxHeadersBytes: 64 * 1024,
  maxHeaderCount: 256,
  maxBodyBytes: 4 * 1024 * 1024,
};
export const HELLO_FRAME_LIMITS: FrameLimits = { maxHeadersBytes: 16 * 1024, maxHeaderCount: 64, maxBodyBytes: 4192 };

/** Why a peer's bytes are no channel message: the connection is closed, `reason` logged. */
export class FrameError extends Error {
  /** The peer opened with another protocol version's magic (or none): it gets the unknown-version reply first. */
  readonly badMagic: boolean;
  constructor(reason: string, badMagic = false) {
    super(reason);
    this.name = 'FrameError';
    this.badMagic = badMagic;
  }
}

/** A message as bytes on the wire. */
export function encodeMessage(message: ChannelMessage): Buffer {
  const parts: Buffer[] = [];
  let headersLength = 0;
  for (const [key, value] of message.headers) {
    const meta = Buffer.alloc(HEADER_META_BYTES);
    meta.writeInt32LE(key, 0);
    meta.writeInt32LE(value.length, 4);
    parts.push(meta, value);
    headersLength += HEADER_META_BYTES + value.length;
  }
  const prelude = Buffer.alloc(PRELUDE_BYTES);
  MAGIC_V2.copy(prelude, 0);
  prelude.writeInt32LE(message.contentType, 4);
  prelude.writeInt32LE(message.sequence, 8);
  prelude.writeInt32LE(headersLength, 12);
  prelude.writeInt32LE(message.body.length, 16);
  return Buffer.concat([prelude, ...parts, message.body]);
}

/** The answer to a peer that opened with an unknown magic: the versions this side speaks (v2 only). */
export function unknownVersionReply(): Buffer {
  const reply = Buffer.alloc(12);
  MAGIC_UNKNOWN_VERSION.copy(reply, 0);
  reply.writeUInt32LE(1, 4);
  reply.writeUInt32LE(2, 8);
  return reply;
}

function decodeHeaders(data: Buffer, limits: FrameLimits): Map<number, Buffer> {
  const headers = new Map<number, Buffer>();
  let offset = 0;
  while (offset < data.length) {
    if (offset + HEADER_META_BYTES > data.length) throw new FrameError('a header is cut short in its key or length');
    const key = data.readInt32LE(offset);
    const length = data.readUInt32LE(offset + 4);
    const start = offset + HEADER_META_BYTES;
    if (length > data.length - start) throw new FrameError(`header ${key} claims more bytes than the headers hold`);
    if (headers.has(key)) throw new FrameError(`header ${key} appears twice`);
    if (headers.size === limits.maxHeaderCount) throw new FrameError(`more than ${limits.maxHeaderCount} headers`);
    headers.set(key, Buffer.from(data.subarray(start, start + length)));
    offset = start + length;
  }
  return headers;
}

/**
 * Reads messages out of a byte stream as it arrives, whatever the chunking. Lengths are checked against the limits
 * from the prelude alone, so an announced 2 GiB body is refused before a byte of it is kept; anything that is not a
 * well-formed message throws a {@link FrameError} and the decoder is of no further use (the connection closes).
 */
export class FrameDecoder {
  private pending: Buffer = Buffer.alloc(0);
  private limits: FrameLimits;

  constructor(limits: FrameLimits) {
    this.limits = limits;
  }

  /** The bounds for the next messages (the hello's are tighter than the rest). */
  setLimits(limits: FrameLimits): void {
    this.limits = limits;
  }

  /** Takes a chunk and returns the messages it completes. */
  push(chunk: Buffer): ChannelMessage[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const messages: ChannelMessage[] = [];
    for (;;) {
      const message = this.next();
      if (!message) return messages;
      messages.push(message);
    }
  }

  /** Bytes received that do not yet make a whole message. */
  get buffered(): number {
    return this.pending.length;
  }

  private next(): ChannelMessage | undefined {
    const data = this.pending;
    const magicSeen = Math.min(data.length, MAGIC_V2.length);
    if (!data.subarray(0, magicSeen).equals(MAGIC_V2.subarray(0, magicSeen))) {
      throw new FrameError('the bytes do not start with the channel v2 magic', true);
    }
    if (data.length < PRELUDE_BYTES) return undefined;
    const headersLength = data.readUInt32LE(12);
    const bodyLength = data.readUInt32LE(16);
    if (headersLength > this.limits.maxHeadersBytes) {
      throw new FrameError(`headers of ${headersLength} bytes exceed ${this.limits.maxHeadersBytes}`);
    }
    if (bodyLength > this.limits.maxBodyBytes) {
      throw new FrameError(`a body of ${bodyLength} bytes exceeds ${this.limits.maxBodyBytes}`);
    }
    const total = PRELUDE_BYTES + headersLength + bodyLength;
    if (data.length < total) return undefined;
    const headers = decodeHeaders(data.subarray(PRELUDE_BYTES, PRELUDE_BYTES + headersLength), this.limits);
    const message: ChannelMessage = {
      contentType: data.readInt32LE(4),
      sequence: data.readInt32LE(8),
      headers,
      body: Buffer.from(data.subarray(PRELUDE_BYTES + headersLength, total)),
    };
    this.pending = data.subarray(total);
    return message;
  }
}
