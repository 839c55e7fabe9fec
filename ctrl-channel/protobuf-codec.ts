import protobuf from 'protobufjs';
import { ROUTER_FRAME_LIMITS } from './frame-codec.ts';
import { MalformedMessage } from './message.ts';
import { CTRL_LINK_SCHEMA, CTRL_SCHEMA, EDGE_SCHEMA, METRICS_SCHEMA } from './wire-schema.ts';

/** A message body that is not what its content type says (truncated, or a wrong wire type): refused, never thrown on. */
export class MalformedBody extends MalformedMessage {
  constructor(typeName: string, cause: Error) {
    super(`malformed ${typeName} body: ${cause.message}`);
    this.name = 'MalformedBody';
  }
}

let root: protobuf.Root | undefined;

function typeOf(name: string): protobuf.Type {
  if (!root) {
    root = new protobuf.Root();
    for (const schema of [CTRL_SCHEMA, CTRL_LINK_SCHEMA, EDGE_SCHEMA, METRICS_SCHEMA]) {
      protobuf.parse(schema, root, { keepCase: true });
    }
  }
  return root.lookupType(name);
}

/**
 * How a decoded body is handed over: 64-bit numbers as JavaScript numbers (indexes, timeouts and idle times all fit
 * below 2^53), enums by their names, absent fields at their proto3 defaults (so `[]`, `''`, `0` and `false` stand for
 * what the sender left out, as the reference reads them), bytes as Buffers.
 */
const DECODE_OPTIONS: protobuf.IConversionOptions = {
  longs: Number,
  enums: String,
  defaults: true,
  arrays: true,
  objects: true,
};

/** Encodes a message of the schema (`ctrl.Route`, `edge.ServerHello`, ...): enum fields by name or number. */
export function encodeBody(typeName: string, value: object): Buffer {
  const type = typeOf(typeName);
  // Names of enum values become numbers first; then a field of the wrong type is this controller's bug, said loudly.
  const message = type.fromObject(value);
  const invalid = type.verify(message);
  if (invalid) throw new TypeError(`${typeName}: ${invalid}`);
  return Buffer.from(type.encode(message).finish());
}

/**
 * Encodes a message whose repeated message field `field` is given already encoded (each element as {@link encodeBody}
 * made it, or as a peer sent it: passed on byte for byte), the other fields from `rest`: elements encoded once to be
 * measured or hashed are not encoded again. The elements are written before the other fields when `field` is the
 * message's lowest-numbered, after them otherwise, so the bytes are {@link encodeBody}'s for the whole message when
 * `field` is its first or its last field.
 */
export function encodeBodyWithEncoded(
  typeName: string,
  field: string,
  encoded: readonly Uint8Array[],
  rest: object,
): Buffer {
  const type = typeOf(typeName);
  const fieldId = type.fields[field]?.id;
  if (fieldId === undefined) throw new TypeError(`${typeName} has no field ${field}`);
  const writer = protobuf.Writer.create();
  // Each element as a length-delimited field (wire type 2) of its number, as a repeated message field is written.
  for (const element of encoded) writer.uint32((fieldId << 3) | 2).bytes(element);
  const elements = writer.finish();
  const others = encodeBody(typeName, rest);
  const isFirst = type.fieldsArray.every((other) => other.id >= fieldId);
  return Buffer.concat(isFirst ? [elements, others] : [others, elements]);
}

const KiB = 1024;

/**
 * The largest body decoded of each message a router sends, far above what the reference's router sends (its largest
 * in the recordings of `test/data/ctrl-channel/` in the comments) yet far below the channel's 4 MiB: protobuf decodes
 * on the event loop, and a body of megabytes would hold every other router's channel for as long as it takes.
 */
const ROUTER_BODY_LIMITS: Readonly<Record<string, number>> = {
  // 144 bytes: a host name and a listener or two; the controller reads 16 listeners at most.
  'edge.ClientHello': 64 * KiB,
  // 14 bytes.
  'edge.SubscribeToDataModelRequest': 4 * KiB,
  // 699 bytes: two tokens, the host's public key; what a terminator keeps of the rest is bounded to about 8 KiB.
  'edge.CreateTerminatorV2Request': 64 * KiB,
  // Not recorded: two tokens, fingerprints and a terminator id.
  'edge.UpdateTerminatorRequest': 16 * KiB,
  // Not recorded: the router sends at most 50 terminator ids (under 2 KiB) a request.
  'ctrl.RemoveTerminatorsRequest': 64 * KiB,
  // A reason's text.
  'edge.RequestClientReSync': 4 * KiB,
  // 40 bytes; a forwarding fault names its circuits' ids, batched by the router: tens of thousands fit.
  'ctrl.Fault': 1024 * KiB,
  // Not recorded: every circuit idle on the router, unbatched, about 40 bytes each: tens of thousands fit.
  'ctrl.CircuitConfirmation': 1024 * KiB,
  // ---- The router-embedded tunneler's. ----
  // 90 bytes: a service id, the terminator's id, its cost and precedence, a start time (no peer data).
  'edge.CreateTunnelTerminatorRequestV2': 64 * KiB,
  // Not recorded: a terminator id, a cost and a precedence.
  'edge.UpdateTunnelTerminatorRequest': 4 * KiB,
  // A service name and the dialer's peer data (its public key, app data, two addresses).
  'edge.CreateTunnelCircuitV2Request': 64 * KiB,
  // Links (issue 37). 2 bytes when the router holds none (`10 01`); about 200 bytes a link, thousands fit.
  'ctrl.RouterLinks': 1024 * KiB,
  // A claimed id and the fingerprints of a certificate chain (a few of 40 characters).
  'ctrl.VerifyRouter': 16 * KiB,
  // One link's underlay connections (a few addresses).
  'ctrl.LinkStateUpdate': 64 * KiB,
  // Every metric the router keeps (a few hundred names, a few dozen bytes each, and each link's own): the decoder
  // skips all but the histograms.
  'metrics.MetricsMessage': 1024 * KiB,
};

/**
 * The controller's own messages, which no router sends (only tests decode them): as large as the frame. Their writers
 * keep them below it (a DataState holds at most 4 MiB of identities, API sessions go in chunks).
 */
const OWN_BODY_LIMITS: Readonly<Record<string, number>> = Object.fromEntries(
  [
    'edge.DataState',
    'edge.DataChangeSet',
    'edge.ApiSessionAdded',
    'edge.ApiSessionUpdated',
    'edge.ApiSessionRemoved',
    'ctrl.PeerStateChanges',
  ].map((typeName) => [typeName, ROUTER_FRAME_LIMITS.maxBodyBytes]),
);

/** The cap of a message type in neither table: one a router comes to send is bounded before anyone thinks of it. */
const DEFAULT_BODY_LIMIT = 64 * KiB;

/** The largest body of `typeName` that {@link decodeBody} decodes. */
export function maxBodyBytes(typeName: string): number {
  return ROUTER_BODY_LIMITS[typeName] ?? OWN_BODY_LIMITS[typeName] ?? DEFAULT_BODY_LIMIT;
}

/**
 * Decodes a body of the schema into a plain object (see {@link DECODE_OPTIONS}); a malformed one, or one past its
 * type's cap ({@link maxBodyBytes}, refused undecoded), is a MalformedBody. Bytes come as Buffers (views of the body's
 * memory, as protobufjs reads a Buffer), so callers compare and print them.
 */
export function decodeBody<T>(typeName: string, body: Uint8Array): T {
  const type = typeOf(typeName);
  const limit = maxBodyBytes(typeName);
  if (body.length > limit) {
    throw new MalformedBody(typeName, new Error(`${body.length} bytes, more than the ${limit} read`));
  }
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  try {
    return type.toObject(type.decode(bytes), DECODE_OPTIONS) as T;
  } catch (error) {
    throw new MalformedBody(typeName, error as Error);
  }
}

/**
 * The elements of a repeated message field of `typeName` as they are in `body`, undecoded (to be passed on byte for
 * byte, unknown fields and all), each checked to decode as its type: the first `max` of them, and how many there were.
 * A body that is not one of `typeName`, or an element that does not decode, is a MalformedBody.
 */
export function encodedElementsOf(
  typeName: string,
  field: string,
  body: Uint8Array,
  max: number,
): { elements: Buffer[]; count: number } {
  const element = typeOf(typeName).fields[field]?.resolve();
  const elementType = element?.repeated ? element.resolvedType : null;
  if (!(elementType instanceof protobuf.Type)) throw new TypeError(`${typeName}.${field} is no list of messages`);
  const limit = maxBodyBytes(typeName);
  if (body.length > limit) {
    throw new MalformedBody(typeName, new Error(`${body.length} bytes, more than the ${limit} read`));
  }
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const elements: Buffer[] = [];
  let count = 0;
  try {
    const reader = protobuf.Reader.create(bytes);
    while (reader.pos < reader.len) {
      const tag = reader.uint32();
      if (tag >>> 3 !== element!.id) {
        reader.skipType(tag & 7);
        continue;
      }
      if ((tag & 7) !== 2) throw new Error(`field ${field} is not length-delimited`);
      const length = reader.uint32();
      const start = reader.pos;
      reader.skip(length);
      count += 1;
      if (elements.length < max) elements.push(bytes.subarray(start, start + length));
    }
  } catch (error) {
    throw new MalformedBody(typeName, error as Error);
  }
  for (const each of elements) decodeBody(elementType.fullName.slice(1), each);
  return { elements, count };
}
