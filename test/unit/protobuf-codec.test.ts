import { describe, expect, it } from 'vitest';
import {
  decodeBody,
  encodeBody,
  encodeBodyWithEncoded,
  MalformedBody,
  maxBodyBytes,
} from '#ctrl-channel/protobuf-codec.ts';

const events = [
  {
    action: 'Create',
    isSynthetic: true,
    publicKey: { data: Buffer.from('key'), kid: 'kid', usages: ['JWTValidation'], format: 'X509CertDer' },
  },
  { action: 'Create', identity: { id: 'identity-1', name: 'device', serviceHostingCosts: { service: 3 } } },
];

describe('the control channel protobuf codec', () => {
  it('encodes a repeated field from elements already encoded to the same bytes as encoding the whole message', () => {
    const rest = { endIndex: 1_764_296_000_000, timelineId: 'timeline' };
    const encoded = events.map((event) => encodeBody('edge.DataEvent', event));

    const body = encodeBodyWithEncoded('edge.DataState', 'events', encoded, rest);

    expect(body.equals(encodeBody('edge.DataState', { events, ...rest }))).toBe(true);
    const decoded = decodeBody<{ events: { identity?: { id: string } }[]; endIndex: number }>('edge.DataState', body);
    expect(decoded.events.map((event) => event.identity?.id)).toEqual([undefined, 'identity-1']);
    expect(decoded.endIndex).toBe(rest.endIndex);
  });

  it('refuses a field the message does not have', () => {
    expect(() => encodeBodyWithEncoded('edge.DataState', 'changes', [], {})).toThrow(/no field changes/);
  });

  it("refuses undecoded a body past its type's cap, as malformed; one at the cap decodes", () => {
    const cap = maxBodyBytes('ctrl.RemoveTerminatorsRequest');
    // One id of `bytes` characters: a one-byte tag, a three-byte length, then the id.
    const body = (bytes: number) => encodeBody('ctrl.RemoveTerminatorsRequest', { terminatorIds: ['x'.repeat(bytes)] });

    expect(cap).toBe(64 * 1024);
    const atCap = body(cap - 4);
    expect(atCap.length).toBe(cap);
    expect(
      decodeBody<{ terminatorIds: string[] }>('ctrl.RemoveTerminatorsRequest', atCap).terminatorIds[0],
    ).toHaveLength(cap - 4);
    const past = body(cap - 3);
    expect(() => decodeBody('ctrl.RemoveTerminatorsRequest', past)).toThrow(MalformedBody);
    expect(() => decodeBody('ctrl.RemoveTerminatorsRequest', past)).toThrow(/65537 bytes, more than the 65536 read/);
    // A router's message of a type without a cap of its own is bounded all the same; the controller's own are not.
    expect(maxBodyBytes('ctrl.RouterInterfacesUpdate')).toBe(64 * 1024);
    expect(maxBodyBytes('edge.DataState')).toBe(4 * 1024 * 1024);
  });

  it('hands bytes over as Buffers, present or left out, whether the body came as a Buffer or a plain Uint8Array', () => {
    const key = Buffer.from('public key');
    const encoded = encodeBody('edge.CreateTerminatorV2Request', { address: 'a', peerData: { 1003: key } });
    type Request = { peerData: Record<string, Buffer>; instanceSecret: Buffer };

    for (const body of [encoded, new Uint8Array(encoded)]) {
      const { peerData, instanceSecret } = decodeBody<Request>('edge.CreateTerminatorV2Request', body);

      expect(Buffer.isBuffer(peerData[1003])).toBe(true);
      expect(peerData[1003]).toEqual(key);
      expect(Buffer.isBuffer(instanceSecret)).toBe(true);
      expect(instanceSecret.length).toBe(0);
    }
  });
});
