import { EventEmitter } from 'node:events';
import type { Server } from 'node:https';
import { describe, expect, it } from 'vitest';
import { createServerTimer } from '../../bench/server-timer.ts';

/** Spends `ms` of this process's CPU time, and returns how much it spent. */
function burn(ms: number): number {
  const before = process.cpuUsage();
  for (;;) {
    const spent = process.cpuUsage(before);
    const spentMs = (spent.user + spent.system) / 1000;
    if (spentMs >= ms) return spentMs;
  }
}

/** A request arriving at a server the timer is attached to; `finish` is its answer handed to the socket. */
function arrive(server: EventEmitter): { finish(): void } {
  const response = new EventEmitter();
  server.emit('request', { method: 'GET', url: '/edge/client/v1/current-api-session/service-updates' }, response);
  return { finish: () => response.emit('finish') };
}

describe('the bench server timer', () => {
  it("counts a request's handler CPU, not the server's work around the handler", async () => {
    const server = new EventEmitter();
    const timer = createServerTimer();
    timer.attach(server as unknown as Server);
    const request = arrive(server);
    burn(30); // the server's own: TLS, parsing, building the event
    const handlerMs = await timer.timeHandler(async () => burn(10));
    burn(30); // writing the answer
    request.finish();
    const times = timer.snapshot();
    expect(times.requests).toBe(1);
    expect(times.cpuMs).toBeGreaterThanOrEqual(handlerMs);
    expect(times.cpuMs).toBeLessThan(handlerMs + 15);
    expect(times.ms).toBeGreaterThanOrEqual(60);
  });

  it("leaves out the bench's own CPU spent inside a handler", async () => {
    let benchMs = 0;
    const timer = createServerTimer(() => benchMs);
    const handlerMs = await timer.timeHandler(async () => {
      benchMs += burn(30); // the bench's request counter, in the handler's DynamoDB request
      return burn(10);
    });
    expect(timer.snapshot().cpuMs).toBeGreaterThanOrEqual(handlerMs - 1);
    expect(timer.snapshot().cpuMs).toBeLessThan(handlerMs + 15);
  });

  it('counts nothing of untimed work', async () => {
    const timer = createServerTimer();
    await timer.untimed(() => timer.timeHandler(async () => burn(10)));
    expect(timer.snapshot().cpuMs).toBe(0);
  });
});
