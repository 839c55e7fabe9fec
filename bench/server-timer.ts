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
   * The process's CPU time (user and system, every thread: argon2 runs on libuv's) while the group handlers ran, in ms:
   * from the event handed to the handler to its answer, what Lambda bills as the function's duration. The local
   * server's own work around it (TLS, parsing the request, building the event, writing the answer) is left out: on AWS
   * the front door does it. The bench's requests are sequential and its client waits meanwhile, and DynamoDB Local is
   * a process of its own, so the process's CPU then is the handler's (with the AWS SDK it calls), less what the
   * bench's own middleware spends in it (`createServerTimer`'s `benchCpuMs`).
   */
  readonly cpuMs: number;
}

export interface ServerTimer {
  /** Attaches the request timer to the local server (once it is started). */
  attach(server: Server): void;
  /** Runs one invocation of a group handler, timing its CPU: the local server's `invokeAs`. */
  timeHandler<T>(invoke: () => Promise<T>): Promise<T>;
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
 * and the loopback transit are outside it. The CPU figure is the handler's alone (`timeHandler`, `ServerTimes.cpuMs`):
 * `benchCpuMs` tells the CPU time the bench's own code running inside a handler has taken so far (its DynamoDB request
 * counter), left out.
 */
export function createServerTimer(benchCpuMs: () => number = () => 0): ServerTimer {
  let requests = 0;
  let billedMs = 0;
  let billedGbSeconds = 0;
  let totalMs = 0;
  let cpuMs = 0;
  let paused = 0;
  return {
    attach: (server) => {
      server.on('request', (request, response) => {
        if (paused > 0) return;
        const memoryMb = memoryMbOf(request.method ?? 'GET', request.url ?? '/');
        const started = performance.now();
        response.once('finish', () => {
          const ms = performance.now() - started;
          requests++;
          totalMs += ms;
          const billed = Math.max(1, Math.ceil(ms));
          billedMs += billed;
          billedGbSeconds += (billed / 1000) * (memoryMb / 1024);
        });
      });
    },
    timeHandler: async (invoke) => {
      if (paused > 0) return invoke();
      const cpuBefore = process.cpuUsage();
      const benchBefore = benchCpuMs();
      try {
        return await invoke();
      } finally {
        const cpu = process.cpuUsage(cpuBefore);
        cpuMs += (cpu.user + cpu.system) / 1000 - (benchCpuMs() - benchBefore);
      }
    },
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
