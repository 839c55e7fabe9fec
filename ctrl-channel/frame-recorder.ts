import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { FrameDecoder, ROUTER_FRAME_LIMITS } from './frame-codec.ts';
import {
  type ChannelMessage,
  CircuitRequestHeader,
  CircuitResponseHeader,
  ContentType,
  EdgeHeader,
  Header,
  RouteResultHeader,
  replyForOf,
  TunnelHealthHeader,
} from './message.ts';

/**
 * A recording of a router connection's frames, one JSON line each, for test data (the replay tests) and for seeing
 * what a real router sends. Recordings are of throwaway test networks: the frames a controller pushes carry API
 * session tokens once that is built, so a recording of a real network would hold its secrets.
 */
export interface RecordedFrame {
  /** `in` from the router, `out` from the controller. */
  readonly direction: 'in' | 'out';
  /** Milliseconds since the connection was accepted. */
  readonly atMs: number;
  readonly contentType: number;
  readonly contentTypeName?: string;
  readonly sequence: number;
  readonly replyFor?: number;
  readonly headers: readonly RecordedHeader[];
  readonly bodyLength: number;
  readonly bodyHex: string;
}

export interface RecordedHeader {
  readonly id: number;
  readonly name?: string;
  /** The raw value; left out for the group secret, which is a credential of the router's underlays. */
  readonly hex?: string;
  readonly length: number;
  /** The value read as its header is defined (text, integer, boolean, capability bits), when it is known. */
  readonly decoded?: string | number | boolean | readonly number[];
}

/** What the wire carried that is no frame (the unknown-version reply, garbage): its bytes, and why. */
export interface RecordedUndecodable {
  readonly direction: 'in' | 'out';
  readonly atMs: number;
  readonly undecodable: string;
  readonly hex: string;
}

type Decode = (value: Buffer) => string | number | boolean | readonly number[] | undefined;
const text: Decode = (value) => value.toString('utf8');
const int32: Decode = (value) => (value.length === 4 ? value.readInt32LE(0) : undefined);
const uint32: Decode = (value) => (value.length === 4 ? value.readUInt32LE(0) : undefined);
const byte: Decode = (value) => (value.length === 1 ? value[0] : undefined);
const uint64: Decode = (value) => (value.length === 8 ? value.readBigUInt64LE(0).toString() : undefined);
const bool: Decode = (value) => (value.length === 1 ? value[0] === 1 : undefined);
/** A `big.Int` mask, big-endian: the numbers of its set bits. */
const bits: Decode = (value) => {
  const set: number[] = [];
  value.forEach((byte, index) => {
    for (let bit = 0; bit < 8; bit++) if (byte & (1 << bit)) set.push((value.length - 1 - index) * 8 + bit);
  });
  return set.sort((a, b) => a - b);
};

/** A constant's name as the reference spells it (`updateRouterInterfaces` is `UpdateRouterInterfaces`). */
const referenceName = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

const CONTENT_TYPE_NAMES: ReadonlyMap<number, string> = new Map(
  Object.entries(ContentType).map(([name, contentType]) => [contentType, referenceName(name)]),
);

/** How a known header's value reads; a secret one (a credential) is recorded as its length alone. */
interface HeaderValue {
  readonly decode?: Decode;
  readonly secret?: true;
}

type HeaderTable = ReadonlyMap<number, HeaderValue & { readonly name: string }>;

/** The headers of `ids` (a header constants object of `message.ts`) that `values` says how to read, by id. */
function headerTable<Ids extends Readonly<Record<string, number>>>(
  ids: Ids,
  values: { readonly [name in keyof Ids]?: HeaderValue },
): HeaderTable {
  return new Map(
    Object.entries(values).map(([name, value]) => [ids[name] as number, { name: referenceName(name), ...value }]),
  );
}

/** The channel's headers, which mean the same on every message. */
const CHANNEL_HEADERS = headerTable(Header, {
  replyFor: { decode: int32 },
  resultSuccess: { decode: bool },
  heartbeat: { decode: uint64 },
  heartbeatResponse: { decode: uint64 },
});

/**
 * The hello's headers, on a hello and its answer only. The group secret, a credential of the router's underlays, is
 * not recorded.
 */
const HELLO_HEADERS = headerTable(Header, {
  connectionId: { decode: text },
  helloVersion: { decode: text },
  type: { decode: text },
  id: { decode: text },
  isGrouped: { decode: bool },
  groupSecret: { secret: true },
  isFirstGroupConnection: { decode: bool },
  underlayType: { decode: text },
  listeners: {},
  capabilities: { decode: bits },
  ctrlChanListeners: {},
});

const SYNC_HEADERS = headerTable(Header, {
  syncStrategyType: { decode: text },
  syncStrategyState: { decode: text },
});

const DATA_MODEL_HEADERS = headerTable(Header, { routerDataModelSubscriptionId: { decode: text } });

const CIRCUIT_REQUEST_HEADERS = headerTable(CircuitRequestHeader, {
  peerData: {},
  sessionToken: { decode: text },
  fingerprints: {},
  terminatorInstanceId: { decode: text },
  apiSessionToken: { decode: text },
});

/**
 * The headers each content type names, beside the channel's: header ids from 1000 are each message type's own (1014
 * is the sync strategy's state on an API session message and the SDK's error code on an Error), and those below 128
 * the channel's or, on a hello, the hello's (10 is a hello's group secret and a circuit request's peer data). A header
 * a message's table does not name is recorded by its number.
 */
const HEADERS_OF: ReadonlyMap<number, HeaderTable> = new Map([
  [ContentType.hello, HELLO_HEADERS],
  [ContentType.result, HELLO_HEADERS],
  [ContentType.serverHello, headerTable(Header, { routerDataModel: { decode: bool } })],
  [
    ContentType.clientHello,
    headerTable(Header, { routerDataModel: { decode: bool }, routerDataModelIndex: { decode: uint64 } }),
  ],
  [ContentType.error, headerTable(EdgeHeader, { errorCode: { decode: uint32 }, circuitId: { decode: text } })],
  [ContentType.apiSessionAdded, SYNC_HEADERS],
  [ContentType.apiSessionUpdated, SYNC_HEADERS],
  [ContentType.apiSessionRemoved, SYNC_HEADERS],
  [ContentType.dataState, DATA_MODEL_HEADERS],
  [ContentType.dataStateChangeSet, DATA_MODEL_HEADERS],
  [ContentType.currentIndexMessage, headerTable(Header, { routerDataModelIndex: { decode: uint64 } })],
  [ContentType.createCircuitV2Request, CIRCUIT_REQUEST_HEADERS],
  [
    ContentType.createCircuitV2Response,
    headerTable(CircuitResponseHeader, {
      peerData: {},
      circuitId: { decode: text },
      address: { decode: text },
      tags: {},
    }),
  ],
  [
    ContentType.tunnelHealthEvent,
    headerTable(TunnelHealthHeader, { terminatorId: { decode: text }, checkPassed: { decode: bool } }),
  ],
  [
    ContentType.routeResult,
    headerTable(RouteResultHeader, {
      attempt: { decode: uint32 },
      success: {},
      error: { decode: text },
      errorCode: { decode: byte },
    }),
  ],
]);

function knownHeader(contentType: number, id: number) {
  return HEADERS_OF.get(contentType)?.get(id) ?? CHANNEL_HEADERS.get(id);
}

/** One frame as a recording's line holds it. */
export function recordedFrame(direction: 'in' | 'out', atMs: number, message: ChannelMessage): RecordedFrame {
  const headers = [...message.headers]
    .sort(([a], [b]) => a - b)
    .map(([id, value]): RecordedHeader => {
      const known = knownHeader(message.contentType, id);
      if (known?.secret) return { id, name: known.name, length: value.length };
      const decoded = known?.decode?.(value);
      return {
        id,
        ...(known ? { name: known.name } : {}),
        hex: value.toString('hex'),
        length: value.length,
        ...(decoded === undefined ? {} : { decoded }),
      };
    });
  const replyFor = replyForOf(message);
  const name = CONTENT_TYPE_NAMES.get(message.contentType);
  return {
    direction,
    atMs,
    contentType: message.contentType,
    ...(name ? { contentTypeName: name } : {}),
    sequence: message.sequence,
    ...(replyFor === undefined ? {} : { replyFor }),
    headers,
    bodyLength: message.body.length,
    bodyHex: message.body.toString('hex'),
  };
}

/** Rebuilds a recorded frame's message (the replay sends the router's); a redacted header cannot be rebuilt. */
export function messageOfRecord(frame: RecordedFrame): ChannelMessage {
  const headers = new Map<number, Buffer>();
  for (const header of frame.headers) {
    if (header.hex === undefined) throw new Error(`header ${header.id} was not recorded (secret)`);
    headers.set(header.id, Buffer.from(header.hex, 'hex'));
  }
  return {
    contentType: frame.contentType,
    sequence: frame.sequence,
    headers,
    body: Buffer.from(frame.bodyHex, 'hex'),
  };
}

/**
 * Records every frame of `socket` both ways into a new JSONL file under `directory`: what arrives through a
 * listener of its own (the hello reader pauses the socket; a paused socket is not resumed by another listener), what
 * leaves by wrapping the socket's `write`, so every sender (the hello's answer, the channel, a refusal) is seen
 * without knowing of the recorder. Each direction is decoded by its own decoder, as the peer reads it. Throws when
 * the directory cannot be made; `onError` hears of a file that cannot be written.
 */
export function recordFrames(
  socket: TLSSocket,
  directory: string,
  onError: (error: Error) => void,
  now: () => number = Date.now,
): string {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const startedAt = now();
  const file = join(
    directory,
    `${new Date(startedAt).toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}.jsonl`,
  );
  const out = createWriteStream(file, { flags: 'a', mode: 0o600 });
  // A recording that cannot be written (a full disk) is given up; the connection goes on.
  out.once('error', onError);
  const tap = (direction: 'in' | 'out') => {
    const decoder = new FrameDecoder(ROUTER_FRAME_LIMITS);
    let broken = false;
    return (chunk: Buffer) => {
      const atMs = now() - startedAt;
      if (broken) return;
      try {
        for (const message of decoder.push(chunk))
          out.write(`${JSON.stringify(recordedFrame(direction, atMs, message))}\n`);
      } catch (error) {
        // After bytes that are no frame the stream cannot be followed: record them and stop this direction.
        broken = true;
        const line: RecordedUndecodable = {
          direction,
          atMs,
          undecodable: (error as Error).message,
          hex: chunk.toString('hex'),
        };
        out.write(`${JSON.stringify(line)}\n`);
      }
    };
  };
  socket.on('data', tap('in'));
  const outgoing = tap('out');
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  socket.write = ((...args: unknown[]) => {
    if (Buffer.isBuffer(args[0])) outgoing(args[0]);
    return write(...args);
  }) as typeof socket.write;
  const end = socket.end.bind(socket) as (...args: unknown[]) => TLSSocket;
  socket.end = ((...args: unknown[]) => {
    if (Buffer.isBuffer(args[0])) outgoing(args[0]);
    return end(...args);
  }) as typeof socket.end;
  socket.once('close', () => out.end());
  return file;
}
