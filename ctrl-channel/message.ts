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
  /** The links a router dialed (`ctrl.RouterLinks`): new ones as they come, all of them when it (re)connects. */
  routerLinks: 1035,
  /**
   * A router asks whether the router dialing it a link is the one it claims (`ctrl.VerifyRouter`), and refuses the
   * link unless a successful result answers within 10 s.
   */
  verifyRouter: 1036,
  updateCtrlAddresses: 1037,
  /** A router's batch of terminators to delete (its SDKs unbound or went away), as a request a result answers. */
  removeTerminatorsRequest: 1038,
  /** The controller tells a router of its peers: connected (with their link listeners), not connected, or gone. */
  peerStateChanges: 1050,
  /**
   * A router told a v2 version reports its network interfaces once connected and whenever they change, as a request,
   * and retries every few seconds until a successful result answers it.
   */
  updateRouterInterfaces: 1052,
  /** A dialed link's underlay connections changed (`ctrl.LinkStateUpdate`): informational, no answer. */
  linkState: 1053,
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
  /** An SDK changed its terminator's cost or precedence (the edge's, not `ctrl_pb`'s 1018): answered by 20210 or 20002. */
  edgeUpdateTerminatorRequest: 20209,
  /** The empty answer to a 20209 that succeeded. */
  edgeUpdateTerminatorResponse: 20210,
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

  // ---- The router-embedded tunneler's (issue 37): a block of its own. ----
  /** A tunneling router intercepted a connection to a service: a circuit from the router itself (20221 or 20002). */
  createTunnelCircuitV2Request: 20220,
  createTunnelCircuitV2Response: 20221,
  /** A tunneling router changed a terminator's cost or precedence: answered by an empty 20409, or 20002. */
  updateTunnelTerminatorRequest: 20408,
  updateTunnelTerminatorResponse: 20409,
  /** A tunneling router's health check of what it hosts (headers {@link TunnelHealthHeader}; not answered). */
  tunnelHealthEvent: 20412,
  /** A tunneling router hosts a service: sent without waiting, answered by 20414 (matched by terminator id). */
  createTunnelTerminatorRequestV2: 20413,
  createTunnelTerminatorResponseV2: 20414,
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
  /**
   * The router's data model subscription a DataState or change set answers (UTF-8): a router drops one naming another
   * subscription than its current one.
   */
  routerDataModelSubscriptionId: 1026,
} as const;

/** The headers of a tunneling router's health event (20412), its whole content: which terminator, and how it went. */
export const TunnelHealthHeader = {
  terminatorId: 1022,
  /** A boolean: the health check passed. */
  checkPassed: 1023,
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

export function uint32Header(value: number): Buffer {
  const encoded = Buffer.alloc(4);
  encoded.writeUInt32LE(value);
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

/**
 * The headers of a router's CreateCircuitV2Request (20218, `ctrl_msg`): its fields are headers, no body. The ids
 * restart below 1000 per message type, so they overlap the channel's hello headers (which never ride on it) and the
 * response's ({@link CircuitResponseHeader}).
 */
export const CircuitRequestHeader = {
  /** The dialer's peer data: a u32 → bytes map. */
  peerData: 10,
  sessionToken: 11,
  /** The SDK's certificate fingerprints: a string slice. */
  fingerprints: 12,
  terminatorInstanceId: 13,
  apiSessionToken: 14,
} as const;

/** The headers of the answer to a CreateCircuitV2Request (20219): its fields are headers too, no body. */
export const CircuitResponseHeader = {
  /** The terminating side's peer data: a u32 → bytes map. */
  peerData: 10,
  circuitId: 11,
  /** The ingress address the router binds the dialer's side to: the start of the route's forwards. */
  address: 12,
  /** The circuit's tags: a string → string map. */
  tags: 13,
} as const;

/**
 * A router's RouteResult (1022, the reply to a Route): the circuit id is its body, the rest headers. Every other header
 * from 1000 up is peer data of the terminating side (its public key, 1003, for end-to-end encryption).
 */
export const RouteResultHeader = {
  /** The attempt the result is for (u32). */
  attempt: 1101,
  /** Present on success (the reference reads presence, not the value). */
  success: 1102,
  error: 1103,
  /** One byte: the reference's route error type (`RouteErrorType`). */
  errorCode: 1104,
} as const;

/**
 * The SDK's edge headers the control plane reads or writes (the `edge_client_pb` HeaderId values), reused on the
 * control channel. Their ids mean other things on other messages (1014 is the sync strategy state on a hello's
 * answer), so they stay out of `Header`, whose ids each name one header in the recordings.
 */
export const EdgeHeader = {
  /** The dialer's or host's public key, for end-to-end encryption. */
  publicKey: 1003,
  /** The SDK error code of a 20002 Error (u32). */
  errorCode: 1014,
  /** The circuit a 20002 Error is about, when one was allocated. */
  circuitId: 1026,
} as const;

/** A u32 header's value, or undefined when the header is absent or not 4 bytes long. */
export function uint32Of(message: ChannelMessage, key: number): number | undefined {
  const value = message.headers.get(key);
  return value?.length === 4 ? value.readUInt32LE(0) : undefined;
}

/**
 * A message of a handled type that is not what its type says (a header or a body that does not read): the router's
 * doing, never the controller's. The channel counts these, and closes a router that keeps sending them
 * (`channel-log.ts`).
 */
export class MalformedMessage extends Error {}

/** A header that is not what its key says (a count past the end, an entry too long): the message is refused. */
export class MalformedHeader extends MalformedMessage {
  constructor(key: number, reason: string) {
    super(`malformed header ${key}: ${reason}`);
    this.name = 'MalformedHeader';
  }
}

/**
 * The reference's bounds on a slice's or a map's header (`channel` message.go): at most 128 entries of at most
 * 8 KiB each. The frame's own limits already bound the bytes; these refuse what the reference refuses.
 */
const MAX_COLLECTION_ENTRIES = 128;
const MAX_COLLECTION_ENTRY_BYTES = 8192;

/** Reads a header's length-prefixed parts (u32 LE lengths, fixed-size u32 keys), never past its end. */
class HeaderReader {
  private offset = 0;
  private readonly key: number;
  private readonly value: Buffer;
  constructor(key: number, value: Buffer) {
    this.key = key;
    this.value = value;
  }

  count(): number {
    const count = this.uint32('count');
    if (count > MAX_COLLECTION_ENTRIES) {
      throw new MalformedHeader(this.key, `${count} entries, at most ${MAX_COLLECTION_ENTRIES}`);
    }
    return count;
  }

  uint32(what: string): number {
    if (this.offset + 4 > this.value.length) throw new MalformedHeader(this.key, `no room for the ${what}`);
    const read = this.value.readUInt32LE(this.offset);
    this.offset += 4;
    return read;
  }

  bytes(): Buffer {
    const length = this.uint32('length');
    if (length > MAX_COLLECTION_ENTRY_BYTES) throw new MalformedHeader(this.key, `an entry of ${length} bytes`);
    if (this.offset + length > this.value.length) throw new MalformedHeader(this.key, 'an entry past the end');
    const read = this.value.subarray(this.offset, this.offset + length);
    this.offset += length;
    return read;
  }
}

function lengthPrefixed(parts: readonly Buffer[]): Buffer[] {
  return parts.flatMap((part) => [uint32Header(part.length), part]);
}

/** A string slice header: u32 LE count, then each string as u32 LE length and UTF-8 bytes; none is an empty value. */
export function stringSliceHeader(values: readonly string[]): Buffer {
  if (values.length === 0) return Buffer.alloc(0);
  return Buffer.concat([uint32Header(values.length), ...lengthPrefixed(values.map((value) => Buffer.from(value)))]);
}

/** A string slice header's strings; [] when absent or empty; a {@link MalformedHeader} when it is not one. */
export function stringSliceOf(message: ChannelMessage, key: number): string[] {
  const value = message.headers.get(key);
  if (!value?.length) return [];
  const reader = new HeaderReader(key, value);
  const count = reader.count();
  const strings: string[] = [];
  for (let index = 0; index < count; index++) strings.push(reader.bytes().toString());
  return strings;
}

/** A u32 → bytes map header: u32 LE count, then each entry as u32 LE key, u32 LE length and bytes. */
export function uint32BytesMapHeader(map: ReadonlyMap<number, Buffer>): Buffer {
  if (map.size === 0) return Buffer.alloc(0);
  const entries = [...map].flatMap(([key, value]) => [uint32Header(key), uint32Header(value.length), value]);
  return Buffer.concat([uint32Header(map.size), ...entries]);
}

/** A u32 → bytes map header's entries; empty when absent or empty; a {@link MalformedHeader} when it is not one. */
export function uint32BytesMapOf(message: ChannelMessage, key: number): Map<number, Buffer> {
  const value = message.headers.get(key);
  const map = new Map<number, Buffer>();
  if (!value?.length) return map;
  const reader = new HeaderReader(key, value);
  const count = reader.count();
  for (let index = 0; index < count; index++) {
    const entryKey = reader.uint32('key');
    map.set(entryKey, Buffer.from(reader.bytes()));
  }
  return map;
}

/** A string → string map header: u32 LE count, then each key and value as u32 LE length and UTF-8 bytes. */
export function stringMapHeader(map: Readonly<Record<string, string>>): Buffer {
  const entries = Object.entries(map);
  if (entries.length === 0) return Buffer.alloc(0);
  const parts = entries.flatMap(([key, value]) => [Buffer.from(key), Buffer.from(value)]);
  return Buffer.concat([uint32Header(entries.length), ...lengthPrefixed(parts)]);
}

/** A string → string map header's entries; empty when absent or empty; a {@link MalformedHeader} when it is not one. */
export function stringMapOf(message: ChannelMessage, key: number): Map<string, string> {
  const value = message.headers.get(key);
  const map = new Map<string, string>();
  if (!value?.length) return map;
  const reader = new HeaderReader(key, value);
  const count = reader.count();
  for (let index = 0; index < count; index++) map.set(reader.bytes().toString(), reader.bytes().toString());
  return map;
}
