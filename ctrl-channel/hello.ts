import { randomBytes, randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { encodeMessage, FrameDecoder, FrameError, HELLO_FRAME_LIMITS, unknownVersionReply } from './frame-codec.ts';
import {
  boolHeader,
  type ChannelMessage,
  ContentType,
  HELLO_SEQUENCE,
  Header,
  isHeaderTrue,
  replyHeaders,
  resultMessage,
} from './message.ts';
import { encodeVersionInfo, type VersionInfo } from './version-info.ts';

/** The hello a peer opened with, the decoder holding any bytes after it, and the messages that came with it. */
export interface ReceivedHello {
  readonly hello: ChannelMessage;
  readonly decoder: FrameDecoder;
  readonly following: ChannelMessage[];
}

/**
 * Reads the first message of a connection, which must be a hello, within `timeoutMs` (the reference's connect
 * timeout, 5 s). Garbage, another version's magic (answered with the versions spoken), an oversized hello, another
 * message first, silence, or a close each reject: the caller closes the connection.
 */
export function readHello(socket: Duplex, timeoutMs: number): Promise<ReceivedHello> {
  const decoder = new FrameDecoder(HELLO_FRAME_LIMITS);
  return new Promise((resolve, reject) => {
    const done = (error?: Error, result?: ReceivedHello) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.off('error', onClose);
      if (error) reject(error);
      else resolve(result!);
    };
    const onData = (chunk: Buffer) => {
      let messages: ChannelMessage[];
      try {
        messages = decoder.push(chunk);
      } catch (error) {
        if (error instanceof FrameError && error.badMagic) socket.write(unknownVersionReply());
        done(error as Error);
        return;
      }
      const [hello, ...following] = messages;
      if (!hello) return;
      if (hello.contentType !== ContentType.hello) {
        done(new FrameError(`the first message is of content type ${hello.contentType}, not a hello`));
        return;
      }
      // Nothing more is read until the caller decides: the messages after the hello wait in the socket.
      socket.pause();
      done(undefined, { hello, decoder, following });
    };
    const onClose = () => done(new FrameError('the connection closed before its hello'));
    const timer = setTimeout(() => done(new FrameError(`no hello within ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.once('error', onClose);
  });
}

/** The id the hello names its sender by (its body: the router's certificate common name). */
export function helloIdOf(hello: ChannelMessage): string {
  return hello.body.toString('utf8');
}

/** What this controller tells a router about itself in its answer to the hello. */
export interface ControllerHello {
  /** The controller's id, which the router keys its controller by (`GET /controllers` shows the same). */
  readonly id: string;
  readonly versionInfo: VersionInfo;
  /** The capability mask (`ctrl_pb` CapabilitiesHeader), big-endian as Go's `big.Int.Bytes()`. */
  readonly capabilities: Buffer;
}

/**
 * The answer to an accepted hello, as the reference's listener writes it: a successful result replying for the
 * hello, with the channel's connection id, the controller's id, version and capabilities; a grouped hello
 * (multi-underlay, as v2 routers dial) has its grouped flag and underlay type reflected and gets its group secret
 * (the router's own, or a new random one), which the router's multi-channel requires.
 */
export function helloAccepted(hello: ChannelMessage, controller: ControllerHello): Buffer {
  const grouped = isHeaderTrue(hello, Header.isGrouped);
  // A grouped hello names its group (the router's connection id), which the answer keeps; else the channel gets one.
  const groupId = grouped ? hello.headers.get(Header.connectionId) : undefined;
  const own = new Map<number, Buffer>([
    [Header.connectionId, groupId && groupId.length > 0 ? groupId : Buffer.from(randomUUID())],
    [Header.id, Buffer.from(controller.id)],
    [Header.helloVersion, encodeVersionInfo(controller.versionInfo)],
    [Header.capabilities, controller.capabilities],
  ]);
  if (grouped) {
    own.set(Header.isGrouped, boolHeader(true));
    own.set(Header.groupSecret, hello.headers.get(Header.groupSecret) ?? randomBytes(16));
  }
  const type = hello.headers.get(Header.type);
  if (type && type.length > 0) own.set(Header.type, type);
  return answer(hello, resultMessage(true, '', own));
}

/** The answer to a refused hello: a failed result whose text the router logs, before the connection closes. */
export function helloRefused(hello: ChannelMessage, reason: string): Buffer {
  return answer(hello, resultMessage(false, reason));
}

function answer(hello: ChannelMessage, result: ReturnType<typeof resultMessage>): Buffer {
  return encodeMessage({
    contentType: result.contentType,
    sequence: HELLO_SEQUENCE,
    headers: replyHeaders(hello, result.headers),
    body: result.body,
  });
}
