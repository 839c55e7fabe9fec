import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { recordedFrame } from '#ctrl-channel/frame-recorder.ts';
import { ContentType } from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody, encodeBodyWithEncoded, maxBodyBytes } from '#ctrl-channel/protobuf-codec.ts';

/** A link listener as the reference router puts it in its hello (header 1000), every field set. */
const listener = {
  address: 'tls:r2.links.test:13102',
  protocol: 'tls',
  costTags: ['cheap'],
  groups: ['west', 'east'],
  localBinding: 'eth0',
};

describe('the links messages of the control channel', () => {
  it("reads the reference router's first RouterLinks as recorded (`10 01`): a full refresh of no links", () => {
    expect(decodeBody('ctrl.RouterLinks', Buffer.from('1001', 'hex'))).toEqual({ links: [], fullRefresh: true });
  });

  it('reads and writes each message with the field numbers of the wire', () => {
    const link = {
      id: 'link-1',
      destRouterId: 'r2',
      linkProtocol: 'tls',
      linkCostTags: [],
      dialAddress: 'tls:r2.links.test:13102',
      iteration: 3,
      connState: { stateIteration: 2, conns: [{ type: 'default', localAddr: 'a:1', remoteAddr: 'b:2' }] },
    };
    const messages: [string, object][] = [
      ['ctrl.RouterLinks', { links: [link], fullRefresh: false }],
      ['ctrl.VerifyRouter', { routerId: 'r1', fingerprints: ['0a1b', 'ffee'] }],
      ['ctrl.LinkStateUpdate', { linkId: 'link-1', linkIteration: 3, connState: link.connState }],
      [
        'ctrl.PeerStateChanges',
        {
          changes: [
            { id: 'r2', version: 'v2.0.0-pre12', state: 'Healthy', listeners: [listener] },
            { id: 'r3', version: '', state: 'Unhealthy', listeners: [] },
            { id: 'r4', version: '', state: 'Removed', listeners: [] },
          ],
        },
      ],
      ['ctrl.Fault', { subject: 'LinkDuplicate', id: 'link-1', iteration: 3 }],
    ];
    for (const [typeName, value] of messages) {
      expect(decodeBody(typeName, encodeBody(typeName, value)), typeName).toEqual(value);
    }
    // The wire's own numbers: RouterLink's iteration is field 6 (a varint), PeerStateChange's state field 3.
    expect(encodeBody('ctrl.RouterLinks.RouterLink', { iteration: 3 }).toString('hex')).toBe('3003');
    expect(encodeBody('ctrl.PeerStateChange', { state: 'Removed' }).toString('hex')).toBe('1802');
  });

  it('passes a listener on as it came, fields unknown to this schema included, after the fields before it', () => {
    const known = encodeBody('ctrl.Listener', listener);
    // A field a newer router might add (number 9, a string): kept in the bytes passed on.
    const newer = Buffer.concat([
      known,
      Buffer.from(
        protobuf.Writer.create()
          .uint32((9 << 3) | 2)
          .string('x')
          .finish(),
      ),
    ]);

    const change = encodeBodyWithEncoded('ctrl.PeerStateChange', 'listeners', [newer], {
      id: 'r2',
      version: 'v2.0.0-pre12',
      state: 'Healthy',
    });

    const withKnown = encodeBodyWithEncoded('ctrl.PeerStateChange', 'listeners', [known], {
      id: 'r2',
      version: 'v2.0.0-pre12',
      state: 'Healthy',
    });
    const whole = encodeBody('ctrl.PeerStateChange', { id: 'r2', version: 'v2.0.0-pre12', listeners: [listener] });
    expect(withKnown.equals(whole)).toBe(true);
    expect(change.includes(newer)).toBe(true);
    expect(decodeBody('ctrl.PeerStateChange', change)).toMatchObject({ id: 'r2', listeners: [listener] });
  });

  it("reads a router's metrics report for its histograms' means alone, skipping the rest", () => {
    // As the reference writes one: an event id, a timestamp, tags and meters beside the histograms.
    const histogram = (mean: number) =>
      protobuf.Writer.create().uint32(8).int64(12).uint32(25).double(mean).uint32(40).int64(1).finish();
    const entry = (name: string, mean: number) => {
      const value = histogram(mean);
      return protobuf.Writer.create().uint32(10).string(name).uint32(18).bytes(value).finish();
    };
    const body = Buffer.from(
      protobuf.Writer.create()
        .uint32(10)
        .string('event-1')
        .uint32(18)
        .string('r1')
        .uint32(26)
        .bytes(protobuf.Writer.create().uint32(8).int64(1_700_000_000).finish())
        .uint32(66)
        .bytes(entry('link.link-1.latency', 1_500_000.5))
        .uint32(66)
        .bytes(entry('link.link-1.queue_time', 20_000))
        .finish(),
    );

    expect(decodeBody('metrics.MetricsMessage', body)).toEqual({
      sourceId: 'r1',
      histograms: { 'link.link-1.latency': { mean: 1_500_000.5 }, 'link.link-1.queue_time': { mean: 20_000 } },
    });
  });

  it('bounds what a router sends of them, and names them in recordings', () => {
    expect(maxBodyBytes('ctrl.RouterLinks')).toBe(1024 * 1024);
    expect(maxBodyBytes('ctrl.VerifyRouter')).toBe(16 * 1024);
    expect(maxBodyBytes('metrics.MetricsMessage')).toBe(1024 * 1024);
    const names = [ContentType.verifyRouter, ContentType.peerStateChanges, ContentType.linkState].map(
      (contentType) =>
        recordedFrame('in', 0, { contentType, sequence: 1, headers: new Map(), body: Buffer.alloc(0) }).contentTypeName,
    );
    expect(names).toEqual(['VerifyRouter', 'PeerStateChanges', 'LinkState']);
  });
});
