import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ChannelMessage,
  MalformedHeader,
  stringMapHeader,
  stringMapOf,
  stringSliceHeader,
  stringSliceOf,
  uint32BytesMapHeader,
  uint32BytesMapOf,
  uint32Header,
} from '#ctrl-channel/message.ts';

const KEY = 10;
const carrying = (value: Buffer): ChannelMessage => ({
  contentType: 20218,
  sequence: 1,
  headers: new Map([[KEY, value]]),
  body: Buffer.alloc(0),
});

const text = fc.string({ maxLength: 40 });
const bytes = fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b));

describe("the channel's collection headers (string slice, u32 → bytes map, string → string map)", () => {
  it('read back what they wrote, as the reference lays them out (u32 LE counts, keys and lengths)', () => {
    fc.assert(
      fc.property(
        fc.array(text, { maxLength: 20 }),
        fc.uniqueArray(fc.tuple(fc.nat(), bytes), { selector: ([key]) => key, maxLength: 20 }),
        fc.dictionary(text, text, { maxKeys: 20 }),
        (slice, entries, map) => {
          expect(stringSliceOf(carrying(stringSliceHeader(slice)), KEY)).toEqual(slice);
          const byKey = new Map(entries);
          expect(uint32BytesMapOf(carrying(uint32BytesMapHeader(byKey)), KEY)).toEqual(byKey);
          expect(Object.fromEntries(stringMapOf(carrying(stringMapHeader(map)), KEY))).toEqual({ ...map });
        },
      ),
    );
    expect(stringSliceHeader(['ab'])).toEqual(Buffer.from([1, 0, 0, 0, 2, 0, 0, 0, 0x61, 0x62]));
    expect(uint32BytesMapHeader(new Map([[1003, Buffer.from([7])]]))).toEqual(
      Buffer.from([1, 0, 0, 0, 0xeb, 0x03, 0, 0, 1, 0, 0, 0, 7]),
    );
    // Empty collections are empty values, as the reference writes them.
    expect(stringSliceHeader([])).toHaveLength(0);
    expect(stringMapOf(carrying(Buffer.alloc(0)), KEY).size).toBe(0);
  });

  it('refuse hostile counts and lengths before reading (or allocating) anything for them', () => {
    const count = (n: number) => uint32Header(n);
    expect(() => stringSliceOf(carrying(count(129)), KEY)).toThrow(MalformedHeader);
    expect(() => stringSliceOf(carrying(count(0xffff_ffff)), KEY)).toThrow(/at most 128/);
    expect(() => stringSliceOf(carrying(Buffer.concat([count(1), uint32Header(8193)])), KEY)).toThrow(/8193 bytes/);
    expect(() => uint32BytesMapOf(carrying(Buffer.concat([count(1), uint32Header(1), uint32Header(5)])), KEY)).toThrow(
      /past the end/,
    );
    expect(() => stringMapOf(carrying(Buffer.from([1, 0])), KEY)).toThrow(/no room for the count/);
  });

  it('never fail otherwise on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (raw) => {
        for (const read of [stringSliceOf, uint32BytesMapOf, stringMapOf]) {
          try {
            read(carrying(Buffer.from(raw)), KEY);
          } catch (error) {
            expect(error).toBeInstanceOf(MalformedHeader);
          }
        }
      }),
    );
  });
});
