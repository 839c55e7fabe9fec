import { describe, expect, it } from 'vitest';
import { messageOfRecord, recordedFrame } from '#ctrl-channel/frame-recorder.ts';
import { ContentType, Header, int32Header } from '#ctrl-channel/message.ts';

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
    expect(circuit.headers).toContainEqual({ id: 10, hex: peerData.toString('hex'), length: peerData.length });
    expect(circuit.headers).toContainEqual(
      expect.objectContaining({ id: Header.replyFor, name: 'ReplyFor', decoded: 3 }),
    );
    expect(messageOfRecord(circuit).headers.get(10)).toEqual(peerData);
  });
});
