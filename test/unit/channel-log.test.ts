import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChannelLog } from '#ctrl-channel/channel-log.ts';
import { ContentType, MalformedHeader } from '#ctrl-channel/message.ts';

interface Written {
  level: string;
  event: string;
  fields: Record<string, unknown>;
}

/** A channel log writing into an array, and the reasons it closed its channel for. */
function channelLog() {
  const written: Written[] = [];
  const closed: string[] = [];
  const line = (level: string) => (event: string, fields?: Record<string, unknown>) =>
    written.push({ level, event, fields: fields ?? {} });
  const log = new ChannelLog({ debug: line('debug'), info: line('info'), warn: line('warn') }, (reason) =>
    closed.push(reason),
  );
  return { log, written, closed };
}

const malformed = () => new MalformedHeader(12, 'a count past the end');
const summaries = (written: readonly Written[]) =>
  written.filter((line) => line.event === 'ctrl channel lines summarised');

describe('a channel log', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('closes its channel at the tenth malformed message within a minute, not before', () => {
    const { log, closed } = channelLog();

    for (let count = 0; count < 9; count++) log.malformed(ContentType.fault, malformed());
    expect(closed).toEqual([]);
    log.malformed(ContentType.fault, malformed());

    expect(closed).toEqual(['10 malformed messages within 60 s']);
  });

  it('keeps a channel whose malformed messages are spread over more than a minute (a version disagreeing on a field)', () => {
    const { log, closed, written } = channelLog();

    for (let count = 0; count < 30; count++) {
      log.malformed(ContentType.subscribeToDataModelRequest, malformed());
      vi.advanceTimersByTime(7_000);
    }

    expect(closed).toEqual([]);
    // Three a minute in full, the others summarised at the end of each minute.
    const full = written.filter((line) => line.event === 'ctrl channel refused a malformed message');
    const summarised = summaries(written).flatMap((line) => line.fields.summarised as { count: number }[]);
    expect(full.length + summarised.reduce((sum, entry) => sum + entry.count, 0)).toBe(30);
    expect(full.length).toBeLessThanOrEqual(3 * 4);
  });

  it("summarises what it held back at the minute's end, by event and content type, and gives each kind its own allowance", () => {
    const { log, written, closed } = channelLog();

    for (let count = 0; count < 5; count++) log.failed('router data model not sent', { detail: 'throttled' });
    for (let count = 0; count < 12; count++) log.info('terminator created', { terminatorId: `t${count}` });
    for (const contentType of [ContentType.fault, ContentType.fault, ContentType.fault, ContentType.routeResult]) {
      log.failure({ contentType }, 'ctrl channel fault not handled', malformed());
    }
    log.failure({ contentType: ContentType.fault }, 'ctrl channel fault not handled', new Error('the table is away'));
    expect(summaries(written)).toEqual([]);
    vi.advanceTimersByTime(60_000);

    expect(written.filter((line) => line.event === 'router data model not sent')).toHaveLength(3);
    expect(written.filter((line) => line.event === 'terminator created')).toHaveLength(10);
    expect(written.filter((line) => line.event === 'ctrl channel refused a malformed message')).toHaveLength(3);
    expect(summaries(written)).toEqual([
      {
        level: 'warn',
        event: 'ctrl channel lines summarised',
        fields: {
          summarised: [
            { event: 'router data model not sent', count: 2 },
            { event: 'terminator created', count: 2 },
            { event: 'ctrl channel refused a malformed message', contentType: ContentType.routeResult, count: 1 },
            { event: 'ctrl channel fault not handled', contentType: ContentType.fault, count: 1 },
          ],
          lines: 6,
          since: expect.any(String),
        },
      },
    ]);
    // The controller's own failures never count towards closing.
    expect(closed).toEqual([]);
    // A new minute, a new allowance.
    log.failed('router data model not sent', { detail: 'throttled' });
    expect(written.at(-1)?.event).toBe('router data model not sent');
  });

  it('summarises at info when it held back nothing of warning, and writes debug lines whole', () => {
    const { log, written } = channelLog();

    for (let count = 0; count < 11; count++) log.info('router data model sent');
    for (let count = 0; count < 50; count++) log.debug('ctrl channel dropped a message');
    log.flush();

    expect(written.filter((line) => line.level === 'debug')).toHaveLength(50);
    expect(summaries(written)).toEqual([expect.objectContaining({ level: 'info' })]);
  });
});
