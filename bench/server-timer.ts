import type { Server } from 'node:https';
import { canonicalPath, RouteMatcher } from '#shared/routes/route-matcher.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import { functionMemoryMb } from '../cdk/function-memory.ts';

/** Requests the server answered and how long it took over them: each is one Lambda invocation in AWS. */
export interface ServerTimes {
  readonly requests: number;
  /** Lambda bills each invocation in whole milliseconds, rounded up: the sum of those. */
  readonly billedMs: number;
  /** The same at the memory of the function that answers each request (`cdk/function-memory.ts`): GB-seconds. */
  readonly billedGbSeconds: number;
  readonly ms: number;
  /**
   * The process's CPU time (user and system, every thread: argon2 runs on libuv's) while requests were in the server,
   * in ms: the handler's CPU, as the bench's requests are sequential and its client waits meanwhile.
   */
  readonly cpuMs: number;
}

export interface ServerTimer {
  snapshot(): ServerTimes;
  /** Runs `work` without timing the requests it makes. */
  untimed<T>(work: () => Promise<T>): Promise<T>;
}

const routes = new RouteMatcher(ROUTES);

/** The memory of the function that answers `method url` in AWS: its operation group's (the default for no route). */
export function memoryMbOf(method: string, url: string): number {
  const match = routes.match(method, canonicalPath(new URL(url, 'https://bench').pathname));
  return functionMemoryMb(match.kind === 'found' ? match.route.group : 'default');
}

/**
 * Times each request the local server answers, from its arrival (headers read) to the last byte of its answer handed
 * to the socket: the body read, the group handler (what the Lambda runs) and the write. The TLS handshake, the client
 * and the loopback transit are outside it.
 */
export function timeServerRequests(server: Server): ServerTimer {
  let requests = 0;
  let billedMs = 0;
  let billedGbSeconds = 0;
  let totalMs = 0;
  let cpuMs = 0;
  let paused = 0;
  server.on('request', (request, response) => {
    if (paused > 0) return;
    const memoryMb = memoryMbOf(request.method ?? 'GET', request.url ?? '/');
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    response.once('finish', () => {
      const ms = performance.now() - started;
      const cpu = process.cpuUsage(cpuBefore);
      requests++;
      totalMs += ms;
      cpuMs += (cpu.user + cpu.system) / 1000;
      const billed = Math.max(1, Math.ceil(ms));
      billedMs += billed;
      billedGbSeconds += (billed / 1000) * (memoryMb / 1024);
    });
  });
  return {
    snapshot: () => ({ requests, billedMs, billedGbSeconds, ms: totalMs, cpuMs }),
    untimed: async (work) => {
      paused++;
      try {
        return await work();
      } finally {
        paused--;
      }
    },
  };
}
