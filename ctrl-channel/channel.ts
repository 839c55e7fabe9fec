import type { Duplex } from 'node:stream';
import { ChannelLog, type LineWriter } from './channel-log.ts';
import {
  encodeMessage,
  type FrameDecoder,
  FrameError,
  ROUTER_FRAME_LIMITS,
  unknownVersionReply,
} from './frame-codec.ts';
import {
  type ChannelMessage,
  ContentType,
  Header,
  type OutgoingMessage,
  replyForOf,
  replyHeaders,
  resultMessage,
  uint64Header,
} from './message.ts';

/** How a channel keeps its peer honest: heartbeats both ways, and how long a request waits for its reply. */
export interface ChannelTimings {
  /** How often this side sends a heartbeat (the reference's `sendInterval`, 10 s). */
  readonly heartbeatIntervalMs: number;
  /** How long without an answered heartbeat before the channel closes (the reference's `closeUnresponsiveTimeout`, 30 s). */
  readonly unresponsiveTimeoutMs: number;
  /** How long {@link Channel.request} waits for a reply by default. */
  readonly replyTimeoutMs: number;
  /**
   * How long the controller waits for a router to set up a circuit's route, per attempt (the reference's
   * `routeTimeout`, 10 s when not given).
   */
  readonly routeTimeoutMs?: number;
}

export const DEFAULT_CHANNEL_TIMINGS: ChannelTimings = {
  heartbeatIntervalMs: 10_000,
  unresponsiveTimeoutMs: 30_000,
  replyTimeoutMs: 5_000,
};

/** A request whose reply did not come in time, or whose channel closed first. */
export class ReplyTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplyTimeoutError';
  }
}

type Handler = (message: ChannelMessage, channel: Channel) => void | Promise<void>;

interface Waiting {
  resolve(message: ChannelMessage): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

const INT32_MAX = 0x7fffffff;
/** How long a closing connection has to flush what was written to it (a refusal's reason) before it is cut. */
const CLOSE_GRACE_MS = 1_000;

/** Ends a connection after what was written to it, and cuts it if the peer does not close in turn. */
export function endSocket(socket: Duplex, last?: Buffer): void {
  if (last) socket.end(last);
  else socket.end();
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}

/**
 * One open channel with a peer, after the hello: sends messages with their own sequence, routes what arrives by
 * content type to the handlers registered for it (the higher-level control messages plug in here) and replies to
 * the requests waiting for them, answers heartbeats and latency probes, sends heartbeats of its own and closes when
 * they go unanswered. Messages of a type nobody handles are dropped (metrics, traces: the controller needs none).
 * What its handlers say goes through its bounded {@link log}; a handler that throws on a malformed message has it
 * counted there as the router's doing, any other failure as the controller's own.
 */
export class Channel {
  /**
   * Every line about what the peer's messages cause, bounded per channel (`channel-log.ts`): the features log
   * through it, never through a logger of their own.
   */
  readonly log: ChannelLog;
  private readonly handlers = new Map<number, Handler>();
  private readonly waiting = new Map<number, Waiting>();
  private readonly closeListeners: ((reason: string) => void)[] = [];
  private nextSequence = 1;
  private lastAnswerAt: number;
  private lastHeartbeatAt = 0;
  private readonly ticker: NodeJS.Timeout;
  private closedBecause: string | undefined;
  private readonly aliveListeners: (() => void)[] = [];

  private readonly socket: Duplex;
  private readonly decoder: FrameDecoder;
  private readonly timings: ChannelTimings;

  constructor(socket: Duplex, decoder: FrameDecoder, timings: ChannelTimings, writer: LineWriter) {
    this.socket = socket;
    this.decoder = decoder;
    this.timings = timings;
    this.log = new ChannelLog(writer, (reason) => this.close(reason));
    decoder.setLimits(ROUTER_FRAME_LIMITS);
    // As the reference does, a new peer gets twice the timeout to answer its first heartbeat.
    this.lastAnswerAt = Date.now() + timings.unresponsiveTimeoutMs;
    const tick = Math.max(10, Math.min(1_000, Math.floor(timings.heartbeatIntervalMs / 2)));
    this.ticker = setInterval(() => this.checkHeartbeats(), tick);
    this.ticker.unref();
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('close', () => this.close('the connection closed'));
    socket.on('error', (error: Error) => this.close(`the connection failed: ${error.message}`));
    // The hello's reader paused the socket so nothing after the hello was lost before this channel listened.
    socket.resume();
  }

  /** Whether the channel is closed, and why. */
  get closeReason(): string | undefined {
    return this.closedBecause;
  }

  /** How long a request waits for its reply by default (the timings the channel was made with). */
  get replyTimeoutMs(): number {
    return this.timings.replyTimeoutMs;
  }

  /** Handles every message of `contentType` (one handler a type; replies go to their requests, not here). */
  handle(contentType: number, handler: Handler): void {
    this.handlers.set(contentType, handler);
  }

  /** Runs when the channel closes, with the reason. */
  onClose(listener: (reason: string) => void): void {
    if (this.closedBecause !== undefined) listener(this.closedBecause);
    else this.closeListeners.push(listener);
  }

  /** Runs each time the peer answers a heartbeat: it is there (the endpoint refreshes its lease). */
  onAlive(listener: () => void): void {
    this.aliveListeners.push(listener);
  }

  /** Sends a message under the next sequence and returns that sequence. */
  send(message: OutgoingMessage): number {
    const sequence = this.takeSequence();
    this.write({
      contentType: message.contentType,
      sequence,
      headers: message.headers ?? new Map(),
      body: message.body ?? Buffer.alloc(0),
    });
    return sequence;
  }

  /** Sends a request and resolves with its reply, or rejects after `timeoutMs` or when the channel closes first. */
  request(message: OutgoingMessage, timeoutMs = this.timings.replyTimeoutMs): Promise<ChannelMessage> {
    if (this.closedBecause !== undefined)
      return Promise.reject(new ReplyTimeoutError(`channel closed: ${this.closedBecause}`));
    return new Promise((resolve, reject) => {
      const sequence = this.send(message);
      const timer = setTimeout(() => {
        this.waiting.delete(sequence);
        reject(new ReplyTimeoutError(`no reply to message ${sequence} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(sequence, { resolve, reject, timer });
    });
  }

  /** Sends the reply to `request`: its sequence in the reply-for header, its reflected headers copied. */
  reply(request: ChannelMessage, message: OutgoingMessage): number {
    return this.send({ ...message, headers: replyHeaders(request, message.headers) });
  }

  /** Closes the channel and its connection; the requests still waiting fail. */
  close(reason: string): void {
    if (this.closedBecause !== undefined) return;
    this.closedBecause = reason;
    clearInterval(this.ticker);
    for (const [sequence, waiting] of this.waiting) {
      clearTimeout(waiting.timer);
      waiting.reject(new ReplyTimeoutError(`channel closed before the reply to ${sequence}: ${reason}`));
    }
    this.waiting.clear();
    endSocket(this.socket);
    this.log.flush();
    for (const listener of this.closeListeners.splice(0)) listener(reason);
  }

  /** Takes the messages that arrived with the hello, before the channel existed. */
  deliver(messages: readonly ChannelMessage[]): void {
    for (const message of messages) this.dispatch(message);
  }

  private write(message: ChannelMessage): void {
    if (this.closedBecause !== undefined) return;
    this.socket.write(encodeMessage(message));
  }

  private receive(chunk: Buffer): void {
    if (this.closedBecause !== undefined) return;
    let messages: ChannelMessage[];
    try {
      messages = this.decoder.push(chunk);
    } catch (error) {
      if (error instanceof FrameError && error.badMagic) this.socket.write(unknownVersionReply());
      this.log.warn('ctrl channel refused a frame', { reason: (error as Error).message });
      this.close(`protocol error: ${(error as Error).message}`);
      return;
    }
    for (const message of messages) this.dispatch(message);
  }

  private dispatch(message: ChannelMessage): void {
    if (this.closedBecause !== undefined) return;
    const heartbeat = message.headers.get(Header.heartbeat);
    if (heartbeat?.length === 8) {
      this.write({
        contentType: ContentType.heartbeat,
        sequence: this.takeSequence(),
        headers: new Map([[Header.heartbeatResponse, heartbeat]]),
        body: Buffer.alloc(0),
      });
    }
    if (message.headers.get(Header.heartbeatResponse)?.length === 8) {
      this.lastAnswerAt = Date.now();
      for (const listener of this.aliveListeners) listener();
    }
    const replyFor = replyForOf(message);
    const waiting = replyFor === undefined ? undefined : this.waiting.get(replyFor);
    if (waiting && replyFor !== undefined) {
      this.waiting.delete(replyFor);
      clearTimeout(waiting.timer);
      waiting.resolve(message);
      return;
    }
    if (message.contentType === ContentType.heartbeat) return;
    if (message.contentType === ContentType.latency) {
      this.reply(message, resultMessage(true));
      return;
    }
    const handler = this.handlers.get(message.contentType);
    if (!handler) {
      // What the controller needs none of (metrics, traces, what is not built): one debug line, never more.
      this.log.debug('ctrl channel dropped a message', { contentType: message.contentType });
      return;
    }
    Promise.resolve()
      .then(() => handler(message, this))
      .catch((error: unknown) => this.log.failure(message, 'ctrl channel handler failed', error));
  }

  private takeSequence(): number {
    const sequence = this.nextSequence;
    this.nextSequence = sequence === INT32_MAX ? 1 : sequence + 1;
    return sequence;
  }

  private checkHeartbeats(): void {
    const now = Date.now();
    if (now - this.lastAnswerAt > this.timings.unresponsiveTimeoutMs) {
      this.close(`no heartbeat answered within ${this.timings.unresponsiveTimeoutMs} ms`);
      return;
    }
    if (now - this.lastHeartbeatAt >= this.timings.heartbeatIntervalMs) {
      this.lastHeartbeatAt = now;
      this.write({
        contentType: ContentType.heartbeat,
        sequence: this.takeSequence(),
        headers: new Map([[Header.heartbeat, uint64Header(process.hrtime.bigint() + EPOCH_OFFSET_NS)]]),
        body: Buffer.alloc(0),
      });
    }
  }
}

/** Unix time in nanoseconds is what the reference puts in a heartbeat (and measures latency against). */
const EPOCH_OFFSET_NS = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();
