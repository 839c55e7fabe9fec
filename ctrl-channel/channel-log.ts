import type { Logger } from '#shared/log/logger.ts';
import { MalformedMessage } from './message.ts';

/** Where a channel's lines go: a logger whose context names the router, its connection and the endpoint. */
export type LineWriter = Pick<Logger, 'debug' | 'info' | 'warn'>;

type Fields = Record<string, unknown>;
type Level = 'info' | 'warn';

/**
 * What a line is about, each kind with its own allowance of lines written in full per period, so that one kind
 * flooding never hides the first lines of another:
 * - `malformed`: a message of a handled type that is not what its type says, the router's doing (counted towards
 *   closing the channel);
 * - `failed`: the controller's own failure serving the router (its table, a bug), never held against the router;
 * - `told`: everything else a router's messages make the controller say (a terminator created, a Dial refused).
 */
type Kind = 'malformed' | 'failed' | 'told';

/**
 * Lines in full per period and kind. A healthy router's channel says a few things a minute (its ClientHello, a data
 * model sent, terminators as its SDKs bind); the first few lines of a kind show what went wrong, the rest would only
 * repeat it, so they are counted into the period's summary instead: at most 16 lines and a summary a minute per
 * channel (besides its opened and closed lines, and debug lines), whatever the router sends and however the table
 * fails.
 */
const LINES_IN_FULL: Readonly<Record<Kind, number>> = { malformed: 3, failed: 3, told: 10 };
/** How often the lines held back are summarised (and the allowances start again). */
const SUMMARY_PERIOD_MS = 60_000;

/**
 * A router that sends this many malformed messages within the window is closed. A reference router sends none: it
 * writes what it reads with the same schemas. One now and then may still come from a version that disagrees on a
 * field, and the reference logs and drops it with the channel kept, as the features do; ten in a minute is no
 * disagreement over a field but a router that does not speak the protocol (or an attacker holding its certificate),
 * and keeping it costs a decode and a count per message for ever. Closed, the router reconnects, which costs the
 * controller no more than a reconnection the router may make whenever it likes.
 */
const MALFORMED_TO_CLOSE = 10;
const MALFORMED_WINDOW_MS = 60_000;

const MALFORMED_EVENT = 'ctrl channel refused a malformed message';
const SUMMARY_EVENT = 'ctrl channel lines summarised';

interface HeldBack {
  readonly event: string;
  readonly contentType: number | undefined;
  count: number;
}

const detailOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * One channel's log, bounded: every line about what a router's messages cause goes through it, so that no router
 * can flood the log however many messages it sends. Each kind of line (see {@link Kind}) is written in full a few
 * times per period; the rest are counted by event and content type and written as one summary line at the end of the
 * period, and when the channel closes. Malformed messages are also counted towards closing the channel
 * ({@link MALFORMED_TO_CLOSE}); the controller's own failures never are. Debug lines are written whole: an operator
 * turns debug on to see every message.
 */
export class ChannelLog {
  private readonly writer: LineWriter;
  private readonly closeChannel: (reason: string) => void;
  private periodStartedAt = Number.NEGATIVE_INFINITY;
  private readonly writtenInPeriod = new Map<Kind, number>();
  private readonly heldBack = new Map<string, HeldBack>();
  private heldBackSince: number | undefined;
  private heldBackWarnings = false;
  private summaryTimer: NodeJS.Timeout | undefined;
  /** When the last malformed messages came, at most {@link MALFORMED_TO_CLOSE}, oldest first. */
  private readonly malformedAt: number[] = [];

  constructor(writer: LineWriter, closeChannel: (reason: string) => void) {
    this.writer = writer;
    this.closeChannel = closeChannel;
  }

  /** The router sent a message of `contentType` that is not what its type says: logged, counted towards closing. */
  malformed(contentType: number, error: Error): void {
    this.write('malformed', 'warn', MALFORMED_EVENT, { contentType, detail: error.message });
    const now = Date.now();
    this.malformedAt.push(now);
    if (this.malformedAt.length > MALFORMED_TO_CLOSE) this.malformedAt.shift();
    const oldest = this.malformedAt[0] ?? now;
    if (this.malformedAt.length === MALFORMED_TO_CLOSE && now - oldest <= MALFORMED_WINDOW_MS) {
      this.closeChannel(`${MALFORMED_TO_CLOSE} malformed messages within ${MALFORMED_WINDOW_MS / 1_000} s`);
    }
  }

  /** The controller's own failure serving the router (a table error): logged, never a reason to close the channel. */
  failed(event: string, fields: Fields = {}): void {
    this.write('failed', 'warn', event, fields);
  }

  /**
   * A failure handling a message: the router's when the message is malformed ({@link malformed}), else the
   * controller's own ({@link failed}, under `event`).
   */
  failure(message: { readonly contentType: number }, event: string, error: unknown, fields: Fields = {}): void {
    if (error instanceof MalformedMessage) this.malformed(message.contentType, error);
    else this.failed(event, { contentType: message.contentType, ...fields, detail: detailOf(error) });
  }

  /** What a router's message made happen, or was refused for on its merits. */
  info(event: string, fields: Fields = {}): void {
    this.write('told', 'info', event, fields);
  }

  warn(event: string, fields: Fields = {}): void {
    this.write('told', 'warn', event, fields);
  }

  debug(event: string, fields: Fields = {}): void {
    this.writer.debug(event, fields);
  }

  /** Writes the summary of what is held back now, not at the period's end: the channel is closing. */
  flush(): void {
    clearTimeout(this.summaryTimer);
    this.summaryTimer = undefined;
    this.writeSummary();
  }

  private write(kind: Kind, level: Level, event: string, fields: Fields): void {
    const now = Date.now();
    if (now - this.periodStartedAt >= SUMMARY_PERIOD_MS) {
      this.flush();
      this.writtenInPeriod.clear();
      this.periodStartedAt = now;
    }
    const written = this.writtenInPeriod.get(kind) ?? 0;
    if (written < LINES_IN_FULL[kind]) {
      this.writtenInPeriod.set(kind, written + 1);
      this.writer[level](event, fields);
      return;
    }
    this.holdBack(level, event, fields.contentType, now);
  }

  /**
   * Counts a line instead of writing it. The keys are few whatever the router sends: the events are the code's own
   * words, and the content types those a handler is bound to.
   */
  private holdBack(level: Level, event: string, contentType: unknown, now: number): void {
    const type = typeof contentType === 'number' ? contentType : undefined;
    const key = `${event}|${type ?? ''}`;
    const entry = this.heldBack.get(key) ?? { event, contentType: type, count: 0 };
    entry.count += 1;
    this.heldBack.set(key, entry);
    this.heldBackSince ??= now;
    if (level === 'warn') this.heldBackWarnings = true;
    if (this.summaryTimer === undefined) {
      this.summaryTimer = setTimeout(() => this.flush(), this.periodStartedAt + SUMMARY_PERIOD_MS - now);
      this.summaryTimer.unref();
    }
  }

  private writeSummary(): void {
    if (this.heldBack.size === 0) return;
    const summarised = [...this.heldBack.values()].map(({ event, contentType, count }) =>
      contentType === undefined ? { event, count } : { event, contentType, count },
    );
    const fields = {
      summarised,
      lines: summarised.reduce((sum, entry) => sum + entry.count, 0),
      since: new Date(this.heldBackSince ?? Date.now()).toISOString(),
    };
    if (this.heldBackWarnings) this.writer.warn(SUMMARY_EVENT, fields);
    else this.writer.info(SUMMARY_EVENT, fields);
    this.heldBack.clear();
    this.heldBackSince = undefined;
    this.heldBackWarnings = false;
  }
}
