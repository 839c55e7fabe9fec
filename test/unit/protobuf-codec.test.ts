import { describe, expect, it } from 'vitest';
import { decodeBody, encodeBody, encodeBodyWithEncoded } from '#ctrl-channel/protobuf-codec.ts';

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
});
