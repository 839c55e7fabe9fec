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

/**
 * The content types this controller knows by name (the reference's names, first letter lowered): the channel's own
 * (0-5), then the control plane's (`ctrl_pb` from 1000, `edge_ctrl_pb` from 20000). Those past the channel's are
 * named for the recordings (`frame-recorder.ts`), and handled where the control plane binds one.
 */
export const ContentType = {
  hello: 0,
  ping: 1,
  result: 2,
  latency: 3,
  latencyResponse: 4,
  heartbeat: 5,
  circuitSuccess: 1001,
  fault: 1004,
  route: 1005,
  unroute: 1006,
  metrics: 1007,
  traceEvent: 1010,
  createTerminatorRequest: 1011,
  removeTerminatorRequest: 1012,
  circuitFailed: 1016,
  updateTerminatorRequest: 1018,
  settings: 1020,
  routeResult: 1022,
  circuitConfirmation: 1034,
  routerLinks: 1035,
  updateCtrlAddresses: 1037,
  /**
   * A router told a v2 version reports its network interfaces once connected and whenever they change, as a request,
   * and retries every few seconds until a successful result answers it.
   */
  updateRouterInterfaces: 1052,
  alerts: 1054,
  requestClusterMembers: 1055,
  serverHello: 20000,
  clientHello: 20001,
  error: 20002,
  apiSessionAdded: 20200,
  apiSessionUpdated: 20201,
  apiSessionRemoved: 20202,
  apiSessionHeartbeat: 20203,
  /** A router whose API session sync failed (a chunk missing 20 s after the first) asks for another. */
  requestClientReSync: 20204,
  healthEvent: 20214,
  createTerminatorV2Request: 20216,
  createTerminatorV2Response: 20217,
  createCircuitV2Request: 20218,
  createCircuitV2Response: 20219,
  connectEvents: 20415,
  dataState: 20500,
  dataStateChangeSet: 20501,
  subscribeToDataModelRequest: 20505,
  currentIndexMessage: 20506,
} as const;

/**
 * The headers this controller knows by name: the channel's own (0-127; 128-255 are reflected onto a reply), then the
 * control plane's (from 1000).
 */
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
  underlayType: 12,
  listeners: 1000,
  /**
   * The capability mask (`ctrl_pb` CapabilitiesHeader). The reference also writes it under 12 for pre-2.0 routers, an
   * id the channel now uses for the underlay type: v2 routers read 1002 alone.
   */
  capabilities: 1002,
  ctrlChanListeners: 1003,
  syncStrategyType: 1013,
  syncStrategyState: 1014,
  routerDataModel: 1024,
  routerDataModelIndex: 1025,
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
