import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { messageOfRecord, type RecordedFrame } from '#ctrl-channel/frame-recorder.ts';
import { type ChannelMessage, ContentType, Header } from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { dialCtrl, enrolledRouter, type RouterEnd } from './ctrl-router.ts';
import type { HttpResponse } from './https-client.ts';
import type { TestController } from './test-controller.ts';

/**
 * A router enrolled by a replay test, standing for a recorded one: it sends the recording's frames under sequences of
 * its own, and reads what the controller sent it by type, keeping the rest for a later read (the controller's
 * messages to several routers interleave in no fixed order).
 */
export class ReplayedRouter {
  private readonly kept: ChannelMessage[] = [];
  private sequence = 100;
  readonly id: string;
  readonly end: RouterEnd;
  constructor(id: string, end: RouterEnd) {
    this.id = id;
    this.end = end;
  }

  send(message: Omit<ChannelMessage, 'sequence'>): number {
    const sequence = this.sequence++;
    this.end.send({ ...message, sequence });
    return sequence;
  }

  async next(contentType: number, timeoutMs = 10_000): Promise<ChannelMessage> {
    const index = this.kept.findIndex((message) => message.contentType === contentType);
    if (index >= 0) return this.kept.splice(index, 1)[0]!;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const message = await this.end.next(Math.max(1, deadline - Date.now()));
      if (message.contentType === contentType) return message;
      this.kept.push(message);
    }
  }

  /** No message of this type within the time: what the controller did not send. */
  async none(contentType: number, timeoutMs: number): Promise<boolean> {
    return this.next(contentType, timeoutMs).then(
      () => false,
      () => true,
    );
  }
}

/** One recorded control channel connection: the router it was, when it was accepted, its frames in order. */
export interface RecordedConnection {
  readonly routerId: string;
  /** When the connection was accepted (its file's name), so frames of different connections can be ordered. */
  readonly startMs: number;
  readonly frames: readonly RecordedFrame[];
}

/** The connections a `CTRL_CHANNEL_RECORD` directory holds, one JSONL file each, in the order they were accepted. */
export function recordedConnections(directory: string): RecordedConnection[] {
  return readdirSync(directory)
    .filter((name) => name.endsWith('.jsonl'))
    .sort()
    .map((name) => {
      const frames = readFileSync(join(directory, name), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as RecordedFrame);
      const [date, time] = name.slice(0, 24).split('T') as [string, string];
      const [hours, minutes, seconds, millis] = time.slice(0, -1).split('-');
      const startMs = Date.parse(`${date}T${hours}:${minutes}:${seconds}.${millis}Z`);
      return { routerId: Buffer.from(frames[0]!.bodyHex, 'hex').toString(), startMs, frames };
    });
}

export const bodyOf = (frame: RecordedFrame) => Buffer.from(frame.bodyHex, 'hex');
export const framesOf = (connection: RecordedConnection, direction: 'in' | 'out', contentType: number) =>
  connection.frames.filter((frame) => frame.direction === direction && frame.contentType === contentType);
/** Whether the recorded router listened for links (its hello carried listeners): a transit router in these runs. */
export const listens = (connection: RecordedConnection) =>
  connection.frames[0]!.headers.some((header) => header.id === Header.listeners);

/**
 * A router enrolled here for a recorded one (an edge router, or a transit router where the recorded one listened),
 * connected, its recorded hello sent under its own id and answered.
 */
export async function connectedStandIn(
  controller: () => TestController,
  call: (method: string, path: string, body?: unknown) => Promise<HttpResponse>,
  connection: RecordedConnection,
  name: string,
  fields: Record<string, unknown> = {},
  port?: number,
): Promise<ReplayedRouter> {
  const collection = listens(connection) ? 'transit-routers' : 'edge-routers';
  const router = await enrolledRouter(controller, call, name, collection, fields);
  const end = await dialCtrl(controller(), router.credentials, { answerHeartbeats: true, ...(port ? { port } : {}) });
  end.send({ ...messageOfRecord(connection.frames[0]!), body: Buffer.from(router.id) });
  await end.next();
  return new ReplayedRouter(router.id, end);
}

/**
 * The recorded router's link reports before its first Route (later ones are of a later iteration), sent by its stand-in,
 * each link's destination named as `here` maps recorded router ids to this test's.
 */
export function replayLinkReportsBeforeFirstRoute(
  connection: RecordedConnection,
  standIn: ReplayedRouter,
  here: (recordedId: string) => string,
): void {
  const routedAt = framesOf(connection, 'out', ContentType.route)[0]!.atMs;
  for (const frame of framesOf(connection, 'in', ContentType.routerLinks).filter((each) => each.atMs < routedAt)) {
    const report = decodeBody<{ links?: { destRouterId: string }[] }>('ctrl.RouterLinks', bodyOf(frame));
    for (const link of report.links ?? []) link.destRouterId = here(link.destRouterId);
    standIn.send({
      contentType: ContentType.routerLinks,
      headers: new Map(),
      body: encodeBody('ctrl.RouterLinks', report),
    });
  }
}
