import protobuf from 'protobufjs';
import { CTRL_SCHEMA, EDGE_SCHEMA } from './wire-schema.ts';

/** A message body that is not what its content type says (truncated, or a wrong wire type): refused, never thrown on. */
export class MalformedBody extends Error {
  constructor(typeName: string, cause: Error) {
    super(`malformed ${typeName} body: ${cause.message}`);
    this.name = 'MalformedBody';
  }
}

let root: protobuf.Root | undefined;

function typeOf(name: string): protobuf.Type {
  if (!root) {
    root = new protobuf.Root();
    protobuf.parse(CTRL_SCHEMA, root, { keepCase: true });
    protobuf.parse(EDGE_SCHEMA, root, { keepCase: true });
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
 * made it), the other fields from `rest`: elements encoded once to be measured or hashed are not encoded again. The
 * bytes are {@link encodeBody}'s for the whole message (fields in number order when `field` is the first).
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
  return Buffer.concat([writer.finish(), encodeBody(typeName, rest)]);
}

/** Decodes a body of the schema into a plain object (see {@link DECODE_OPTIONS}); a malformed one is a MalformedBody. */
export function decodeBody<T>(typeName: string, body: Uint8Array): T {
  const type = typeOf(typeName);
  try {
    const decoded = type.toObject(type.decode(body), DECODE_OPTIONS);
    return toBuffers(decoded) as T;
  } catch (error) {
    throw new MalformedBody(typeName, error as Error);
  }
}

/** protobufjs hands bytes over as Uint8Array views in some paths: Buffers everywhere, so callers compare and print. */
function toBuffers(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.isBuffer(value) ? value : Buffer.from(value);
  if (Array.isArray(value)) return value.map(toBuffers);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, toBuffers(field)]));
  }
  return value;
}
