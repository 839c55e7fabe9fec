import { describe, expect, it } from 'vitest';
import { messageOfRecord, recordedFrame } from '#ctrl-channel/frame-recorder.ts';
import { boolHeader, ContentType, Header, int32Header, uint32Header } from '#ctrl-channel/message.ts';

describe('the control channel recorder', () => {
  it("withholds a hello's group secret, but records a circuit request's header of the same id (its peer data)", () => {
    const secret = Buffer.alloc(16, 7);
    const hello = recordedFrame('in', 0, {
      contentType: ContentType.hello,
      sequence: -1,
      headers: new Map([[Header.groupSecret, secret]]),
      body: Buffer.from('router'),
    });
    const peerData = Buffer.from('0100000003040000000400000061626364', 'hex');
    const circuit = recordedFrame('in', 5, {
      contentType: ContentType.createCircuitV2Request,
      sequence: 9,
      headers: new Map([
        [Header.replyFor, int32Header(3)],
        [10, peerData],
      ]),
      body: Buffer.alloc(0),
    });

    expect(hello.headers).toEqual([{ id: Header.groupSecret, name: 'GroupSecret', length: 16 }]);
    expect(circuit.headers).toContainEqual({
      id: 10,
      name: 'PeerData',
      hex: peerData.toString('hex'),
      length: peerData.length,
    });
    expect(circuit.headers).toContainEqual(
      expect.objectContaining({ id: Header.replyFor, name: 'ReplyFor', decoded: 3 }),
    );
    expect(messageOfRecord(circuit).headers.get(10)).toEqual(peerData);
  });

  it("names a header as its message's type defines it: 1014 is an Error's error code, an API session chunk's sync state", () => {
    const error = recordedFrame('out', 1, {
      contentType: ContentType.error,
      sequence: 4,
      headers: new Map([
        [Header.replyFor, int32Header(3)],
        [1014, uint32Header(8)],
        [1026, Buffer.from('circuit-1')],
        [1013, Buffer.from('instant')],
      ]),
      body: Buffer.from('invalid terminator: not found'),
    });
    const chunk = recordedFrame('out', 2, {
      contentType: ContentType.apiSessionAdded,
      sequence: 5,
      headers: new Map([[1014, Buffer.from('{"id":"s","isLast":true,"sequence":0}')]]),
      body: Buffer.alloc(0),
    });
    const hello = recordedFrame('in', 0, {
      contentType: ContentType.hello,
      sequence: -1,
      headers: new Map([
        [Header.helloVersion, Buffer.from('v2.0.0')],
        [Header.capabilities, Buffer.from([2])],
        [Header.routerDataModel, boolHeader(true)],
      ]),
      body: Buffer.from('router'),
    });

    expect(error.headers).toEqual([
      { id: Header.replyFor, name: 'ReplyFor', hex: '03000000', length: 4, decoded: 3 },
      { id: 1013, hex: Buffer.from('instant').toString('hex'), length: 7 },
      { id: 1014, name: 'ErrorCode', hex: '08000000', length: 4, decoded: 8 },
      { id: 1026, name: 'CircuitId', hex: Buffer.from('circuit-1').toString('hex'), length: 9, decoded: 'circuit-1' },
    ]);
    expect(chunk.headers).toEqual([
      expect.objectContaining({
        id: 1014,
        name: 'SyncStrategyState',
        decoded: '{"id":"s","isLast":true,"sequence":0}',
      }),
    ]);
    expect(hello.headers).toEqual([
      expect.objectContaining({ id: Header.helloVersion, name: 'HelloVersion', decoded: 'v2.0.0' }),
      expect.objectContaining({ id: Header.capabilities, name: 'Capabilities', decoded: [1] }),
      // The data model header is the edge hellos' (20000, 20001): on the channel's hello it is a number.
      { id: Header.routerDataModel, hex: '01', length: 1 },
    ]);
  });
});
