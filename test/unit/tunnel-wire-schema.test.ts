import { describe, expect, it } from 'vitest';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';

/** A protobuf field's tag, as the wire writes it: the field number and wire type, as a varint. */
function tag(field: number, wireType: number): Buffer {
  const bytes: number[] = [];
  let value = (field << 3) | wireType;
  while (value > 0x7f) {
    bytes.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  bytes.push(value);
  return Buffer.from(bytes);
}

const LENGTH_DELIMITED = 2;
const VARINT = 0;
const text = (field: number, value: string) =>
  Buffer.concat([tag(field, LENGTH_DELIMITED), Buffer.from([value.length]), Buffer.from(value)]);
const varint = (field: number, value: number) => Buffer.concat([tag(field, VARINT), Buffer.from([value])]);

describe("the tunneler's messages, at the reference's field numbers (edge_ctrl.proto)", () => {
  it("puts each of the data model's new events under its oneof number: policy 12, posture check 13, a policy's related entities 16, config type 17, config 18", () => {
    const first = (event: object) => encodeBody('edge.DataEvent', event).subarray(0, 2);

    expect(first({ servicePolicy: { id: 'p' } })[0]).toBe(tag(12, LENGTH_DELIMITED)[0]);
    expect(first({ postureCheck: { id: 'c' } })[0]).toBe(tag(13, LENGTH_DELIMITED)[0]);
    expect(first({ servicePolicyChange: { policyId: 'p' } })).toEqual(tag(16, LENGTH_DELIMITED));
    expect(first({ configType: { id: 't' } })).toEqual(tag(17, LENGTH_DELIMITED));
    expect(first({ config: { id: 'c' } })).toEqual(tag(18, LENGTH_DELIMITED));
  });

  it('writes a policy, its related entities and a posture check as the reference reads them', () => {
    expect(encodeBody('edge.DataServicePolicy', { id: 'p', name: 'n', policyType: 'BindPolicy' })).toEqual(
      Buffer.concat([text(1, 'p'), text(2, 'n'), varint(3, 2)]),
    );
    expect(
      encodeBody('edge.DataServicePolicyChange', {
        policyId: 'p',
        relatedEntityIds: ['r'],
        relatedEntityType: 'RelatedIdentity',
        add: true,
      }),
    ).toEqual(Buffer.concat([text(1, 'p'), text(2, 'r'), varint(3, 2), varint(4, 1)]));
    const mac = encodeBody('edge.DataPostureCheck', { id: 'c', typeId: 'MAC', mac: { macAddresses: ['m'] } });
    expect(mac).toEqual(
      Buffer.concat([text(1, 'c'), text(4, 'MAC'), tag(7, LENGTH_DELIMITED), Buffer.from([3]), text(1, 'm')]),
    );
    expect(encodeBody('edge.DataConfig', { id: 'c', typeId: 't', name: 'n', dataJson: '{}' })).toEqual(
      Buffer.concat([text(1, 'c'), text(2, 't'), text(3, 'n'), text(4, '{}')]),
    );
  });

  it("reads a tunneling router's terminator, update and circuit requests", () => {
    const create = Buffer.concat([text(1, 'svc'), text(2, 'term'), varint(4, 7), varint(5, 1), varint(8, 9)]);
    expect(decodeBody('edge.CreateTunnelTerminatorRequestV2', create)).toMatchObject({
      serviceId: 'svc',
      address: 'term',
      cost: 7,
      precedence: 'Required',
      startTime: 9,
    });
    const update = Buffer.concat([text(1, 'term'), varint(2, 5), varint(3, 2), varint(4, 1), varint(5, 1)]);
    expect(decodeBody('edge.UpdateTunnelTerminatorRequest', update)).toEqual({
      terminatorId: 'term',
      cost: 5,
      precedence: 'Failed',
      updatePrecedence: true,
      updateCost: true,
    });
    const circuit = Buffer.concat([text(1, 'echo'), text(2, 'web-1')]);
    expect(decodeBody('edge.CreateTunnelCircuitV2Request', circuit)).toMatchObject({
      serviceName: 'echo',
      terminatorInstanceId: 'web-1',
    });
  });

  it('writes the answers the router matches: the terminator by id with its start time, the circuit with its address', () => {
    expect(
      encodeBody('edge.CreateTunnelTerminatorResponseV2', { terminatorId: 't', startTime: 9, result: 'Success' }),
    ).toEqual(Buffer.concat([text(1, 't'), varint(2, 9)]));
    expect(
      encodeBody('edge.CreateTunnelTerminatorResponseV2', { terminatorId: 't', result: 'FailedOther', errorCode: 7 }),
    ).toEqual(Buffer.concat([text(1, 't'), varint(3, 2), varint(5, 7)]));
    expect(encodeBody('edge.CreateTunnelCircuitV2Response', { circuitId: 'c', address: 'a' })).toEqual(
      Buffer.concat([text(1, 'c'), text(2, 'a')]),
    );
  });
});
