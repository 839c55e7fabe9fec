import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RecordedFrame } from '#ctrl-channel/frame-recorder.ts';
import { ContentType, Header, uint64Header } from '#ctrl-channel/message.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { type Credentials, dialCtrl, enrolledEdgeRouter } from '../support/ctrl-router.ts';

const recordings = mkdtempSync(join(tmpdir(), 'ctrl-record-'));
const { controller, call } = useAdminController(
  { ctrlChannelRecordDir: recordings },
  // The channel alone: the recorder's frames, not the control plane's messages.
  { ctrlFeatures: [] },
);

// A recording directory that cannot be made (a file is in its way).
const blocked = join(recordings, 'blocked');
writeFileSync(blocked, '');
const unrecorded = useAdminController({ ctrlChannelRecordDir: join(blocked, 'frames') });

let router: { id: string; credentials: Credentials };
let unrecordedRouter: { id: string; credentials: Credentials };

beforeAll(async () => {
  router = await enrolledEdgeRouter(controller, call, 'recorded-router');
  unrecordedRouter = await enrolledEdgeRouter(unrecorded.controller, unrecorded.call, 'unrecorded-router');
});

const header = (frame: RecordedFrame, id: number) => frame.headers.find((h) => h.id === id);

describe('the control channel recorder (CTRL_CHANNEL_RECORD)', () => {
  it("writes each frame of a router's connection both ways, decoded, to the connection's own JSONL file", async () => {
    const end = await dialCtrl(controller(), router.credentials);
    await end.hello(router.id);
    end.send({
      contentType: ContentType.heartbeat,
      sequence: 1,
      headers: new Map([[Header.heartbeat, uint64Header(1_234_567_890n)]]),
    });
    await end.next();
    end.socket.destroy();
    await end.closed;
    await new Promise((resolve) => setTimeout(resolve, 200));

    const files = readdirSync(recordings).filter((name) => name.endsWith('.jsonl'));
    expect(files).toHaveLength(1);
    const text = readFileSync(join(recordings, files[0]!), 'utf8');
    const frames = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as RecordedFrame);
    const [hello, answer, beat, beatAnswer] = frames;

    expect(hello).toMatchObject({
      direction: 'in',
      contentType: 0,
      contentTypeName: 'Hello',
      sequence: -1,
      bodyHex: Buffer.from(router.id).toString('hex'),
      bodyLength: router.id.length,
    });
    expect(header(hello!, Header.helloVersion)?.decoded).toBe('v2.0.0-pre12|a1b2c3|2026-01-01T00:00:00Z|linux|amd64');
    expect(header(hello!, 1002)).toEqual({ id: 1002, name: 'Capabilities', hex: '02', length: 1, decoded: [1] });
    expect(answer).toMatchObject({ direction: 'out', contentType: 2, contentTypeName: 'Result', replyFor: -1 });
    expect(header(answer!, Header.resultSuccess)?.decoded).toBe(true);
    expect(header(answer!, 1002)?.decoded).toEqual(expect.arrayContaining([6]));
    // The group secret authenticates a router's further underlays: its length is kept, never its bytes.
    expect(header(answer!, Header.groupSecret)).toEqual({ id: Header.groupSecret, name: 'GroupSecret', length: 16 });
    expect(beat).toMatchObject({ direction: 'in', contentTypeName: 'Heartbeat', sequence: 1 });
    expect(header(beat!, Header.heartbeat)?.decoded).toBe('1234567890');
    expect(beatAnswer).toMatchObject({ direction: 'out', contentTypeName: 'Heartbeat' });
    expect(header(beatAnswer!, Header.heartbeatResponse)?.decoded).toBe('1234567890');
    expect(frames.every((frame) => frame.atMs >= 0)).toBe(true);
  });

  it('lets a router connect when its recording cannot be written, saying so in the log', async () => {
    const end = await dialCtrl(unrecorded.controller(), unrecordedRouter.credentials);

    const answer = await end.hello(unrecordedRouter.id);

    expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
    expect(unrecorded.controller().logLines.some((line) => line.includes('ctrl channel recording failed'))).toBe(true);
    end.socket.destroy();
  });
});
