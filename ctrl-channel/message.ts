/**
 * A message of the OpenZiti channel protocol (github.com/openziti/channel, v4 as the v2 routers require), as this
 * controller reads and writes it: a content type, a sequence, headers keyed by number, a body.
 */
export interface ChannelMessage {
  readonly contentType: number;
  readonly sequence: number;
  readonly headers: ReadonlyMap<number, Buffer>;
  readonly body: Buffer;
}

/** The channel's own content types; the control plane's start at 1000 (`ctrl_pb`, `edge_ctrl_pb`). */
export const ContentType = {
  hello: 0,
  ping: 1,
  result: 2,
  latency: 3,
  latencyResponse: 4,
  heartbeat: 5,
} as const;

/** The channel's own headers (0-127); 128-255 are reflected onto a reply; the control plane's start at 1000. */
export const Header = {
  connectionId: 0,
  replyFor: 1,
  resultSuccess: 2,
  helloVersion: 4,
  heartbeat: 5,
  heartbeatResponse: 6,
  type: 7,
  id: 8,
  isGrouped: 9,
  groupSecret: 10,
  isFirstGroupConnection: 11,
} as const;

/** Headers a reply carries back unchanged (a latency probe's send time, a trace's id). */
const REFLECTED_FIRST = 128;
const REFLECTED_LAST = 255;

/** The sequence of both hellos: the answer to a hello replies for it. */
export const HELLO_SEQUENCE = -1;

/** A message to send: headers given as a plain list or map; the sequence is the sender's. */
export interface OutgoingMessage {
  readonly contentType: number;
  readonly headers?: ReadonlyMap<number, Buffer>;
  readonly body?: Buffer;
}

/** The sequence a message answers, or undefined when it answers none (no 4-byte reply-for header). */
export function replyForOf(message: ChannelMessage): number | undefined {
  const value = message.headers.get(Header.replyFor);
  return value?.length === 4 ? value.readInt32LE(0) : undefined;
}

export function int32Header(value: number): Buffer {
  const encoded = Buffer.alloc(4);
  encoded.writeInt32LE(value);
  return encoded;
}

export function uint64Header(value: bigint): Buffer {
  const encoded = Buffer.alloc(8);
  encoded.writeBigUInt64LE(value);
  return encoded;
}

export function boolHeader(value: boolean): Buffer {
  return Buffer.from([value ? 1 : 0]);
}

/** A boolean header as the reference reads one: present, and its first byte 1. */
export function isHeaderTrue(message: ChannelMessage, key: number): boolean {
  return message.headers.get(key)?.[0] === 1;
}

/** The headers of `request` that its reply reflects, with the reply-for header naming its sequence. */
export function replyHeaders(
  request: ChannelMessage,
  own: ReadonlyMap<number, Buffer> = new Map(),
): Map<number, Buffer> {
  const headers = new Map(own);
  for (const [key, value] of request.headers) {
    if (key >= REFLECTED_FIRST && key <= REFLECTED_LAST) headers.set(key, value);
  }
  headers.set(Header.replyFor, int32Header(request.sequence));
  return headers;
}

/** A result message (a hello's answer, a latency probe's): success or failure, with a message as its body. */
export function resultMessage(success: boolean, text = '', headers: ReadonlyMap<number, Buffer> = new Map()) {
  return {
    contentType: ContentType.result,
    headers: new Map([...headers, [Header.resultSuccess, boolHeader(success)]]),
    body: Buffer.from(text),
  } satisfies OutgoingMessage;
}
