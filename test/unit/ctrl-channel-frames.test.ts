import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  encodeMessage,
  FrameDecoder,
  FrameError,
  HELLO_FRAME_LIMITS,
  ROUTER_FRAME_LIMITS,
  unknownVersionReply,
} from '#ctrl-channel/frame-codec.ts';
import type { ChannelMessage } from '#ctrl-channel/message.ts';
import { decodeVersionInfo, encodeVersionInfo } from '#ctrl-channel/version-info.ts';

const int32 = fc.integer({ min: -0x80000000, max: 0x7fffffff });

const messages = fc.record({
  contentType: int32,
  sequence: int32,
  headers: fc
    .uniqueArray(fc.tuple(int32, fc.uint8Array({ maxLength: 64 })), { selector: ([key]) => key, maxLength: 20 })
    .map((entries) => new Map(entries.map(([key, value]) => [key, Buffer.from(value)]))),
  body: fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes)),
});

/** A frame written by hand, so malformed ones can be: the prelude's fields, then raw header and body bytes. */
function frame(fields: { contentType?: number; sequence?: number; headers?: Buffer; body?: Buffer; magic?: number[] }) {
  const headers = fields.headers ?? Buffer.alloc(0);
  const body = fields.body ?? Buffer.alloc(0);
  const prelude = Buffer.alloc(20);
  Buffer.from(fields.magic ?? [3, 6, 9, 12]).copy(prelude);
  prelude.writeInt32LE(fields.contentType ?? 0, 4);
  prelude.writeInt32LE(fields.sequence ?? 1, 8);
  prelude.writeUInt32LE(headers.length, 12);
  prelude.writeUInt32LE(body.length, 16);
  return Buffer.concat([prelude, headers, body]);
}

function header(key: number, value: Buffer, claimedLength = value.length): Buffer {
  const meta = Buffer.alloc(8);
  meta.writeInt32LE(key, 0);
  meta.writeUInt32LE(claimedLength, 4);
  return Buffer.concat([meta, value]);
}

function decodeAll(bytes: Buffer, limits = ROUTER_FRAME_LIMITS): ChannelMessage[] {
  return new FrameDecoder(limits).push(bytes);
}

describe('the channel v2 frame codec', () => {
  it('writes the reference layout: magic 03 06 09 0c, content type, sequence, lengths, headers, body', () => {
    const bytes = encodeMessage({
      contentType: 5,
      sequence: -1,
      headers: new Map([[1, Buffer.from([0xff, 0xff, 0xff, 0xff])]]),
      body: Buffer.from('hi'),
    });

    expect(bytes.toString('hex')).toBe(
      ['0306090c', '05000000', 'ffffffff', '0c000000', '02000000', '01000000', '04000000', 'ffffffff', '6869'].join(''),
    );
  });

  it('reads back every message it writes, whatever the chunks the bytes arrive in', () => {
    fc.assert(
      fc.property(fc.array(messages, { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 50 }), (sent, step) => {
        const bytes = Buffer.concat(sent.map(encodeMessage));
        const decoder = new FrameDecoder(ROUTER_FRAME_LIMITS);
        const received: ChannelMessage[] = [];
        for (let offset = 0; offset < bytes.length; offset += step) {
          received.push(...decoder.push(bytes.subarray(offset, offset + step)));
        }
        expect(received).toEqual(sent);
        expect(decoder.buffered).toBe(0);
      }),
    );
  });

  it('waits for the rest of a message cut anywhere', () => {
    const bytes = encodeMessage({
      contentType: 1,
      sequence: 2,
      headers: new Map([[7, Buffer.from('x')]]),
      body: Buffer.from('body'),
    });
    const decoder = new FrameDecoder(ROUTER_FRAME_LIMITS);

    expect(decoder.push(bytes.subarray(0, bytes.length - 1))).toEqual([]);
    expect(decoder.push(bytes.subarray(bytes.length - 1))).toHaveLength(1);
  });

  it('refuses bytes that are not the v2 magic as soon as the first byte differs, flagged for the version reply', () => {
    const refusal = (() => {
      try {
        new FrameDecoder(ROUTER_FRAME_LIMITS).push(Buffer.from('GET / HTTP/1.1\r\n'));
      } catch (error) {
        return error;
      }
    })();

    expect(refusal).toBeInstanceOf(FrameError);
    expect((refusal as FrameError).badMagic).toBe(true);
    // v3's magic (which the reference writes only in its tests) is refused too: v2 is the version spoken.
    expect(() => decodeAll(frame({ magic: [3, 6, 9, 13] }))).toThrow(/magic/);
    expect(unknownVersionReply().toString('hex')).toBe('0306090a0100000002000000');
  });

  it.each([
    [
      'headers longer than the limit, from the prelude alone',
      () => {
        const prelude = frame({}).subarray(0, 20);
        prelude.writeUInt32LE(ROUTER_FRAME_LIMITS.maxHeadersBytes + 1, 12);
        return prelude;
      },
      /headers of/,
    ],
    [
      'a body longer than the limit, from the prelude alone',
      () => {
        const prelude = frame({}).subarray(0, 20);
        prelude.writeUInt32LE(0xffffffff, 16);
        return prelude;
      },
      /body of/,
    ],
    ['a header cut short in its key or length', () => frame({ headers: Buffer.alloc(5) }), /cut short/],
    [
      'a header claiming more bytes than the headers hold',
      () => frame({ headers: header(3, Buffer.from('ab'), 3) }),
      /claims more/,
    ],
    [
      'a header appearing twice',
      () => frame({ headers: Buffer.concat([header(3, Buffer.from('a')), header(3, Buffer.from('b'))]) }),
      /twice/,
    ],
    [
      'more headers than the limit',
      () =>
        frame({
          headers: Buffer.concat(
            Array.from({ length: ROUTER_FRAME_LIMITS.maxHeaderCount + 1 }, (_, key) => header(key, Buffer.alloc(0))),
          ),
        }),
      /more than/,
    ],
  ])('refuses %s', (_case, bytes, reason) => {
    expect(() => decodeAll(bytes())).toThrow(reason);
  });

  it('holds a hello to the tighter limits the reference reads a hello with', () => {
    const hello = frame({ body: Buffer.alloc(HELLO_FRAME_LIMITS.maxBodyBytes + 1) });

    expect(() => decodeAll(hello, HELLO_FRAME_LIMITS)).toThrow(/body of/);
    expect(decodeAll(hello)).toHaveLength(1);
  });

  it('never throws anything but a FrameError, whatever the bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), (bytes, withMagic) => {
        const input = Buffer.concat([withMagic ? Buffer.from([3, 6, 9, 12]) : Buffer.alloc(0), Buffer.from(bytes)]);
        try {
          decodeAll(input);
        } catch (error) {
          expect(error).toBeInstanceOf(FrameError);
        }
      }),
    );
  });
});

describe("a hello's version header", () => {
  it('reads the five fields the reference writes, and refuses any other shape', () => {
    const info = { version: 'v2.0.0-pre12', revision: 'abc123', buildDate: '2026-01-01', os: 'linux', arch: 'amd64' };

    expect(decodeVersionInfo(encodeVersionInfo(info))).toEqual(info);
    expect(decodeVersionInfo(Buffer.from('v2|abc|date|linux'))).toBeUndefined();
    expect(decodeVersionInfo(Buffer.from('v2|abc|date|linux|amd64|extra'))).toBeUndefined();
    expect(decodeVersionInfo(Buffer.from('v2\n|abc|date|linux|amd64'))).toBeUndefined();
    expect(decodeVersionInfo(undefined)).toBeUndefined();
  });
});
