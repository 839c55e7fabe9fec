import type { Server } from 'node:https';

/** Requests the server answered and how long it took over them: each is one Lambda invocation in AWS. */
export interface ServerTimes {
  readonly requests: number;
  /** Lambda bills each invocation in whole milliseconds, rounded up: the sum of those. */
  readonly billedMs: number;
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

/**
 * Times each request the local server answers, from its arrival (headers read) to the last byte of its answer handed
 * to the socket: the body read, the group handler (what the Lambda runs) and the write. The TLS handshake, the client
 * and the loopback transit are outside it.
 */
export function timeServerRequests(server: Server): ServerTimer {
  let requests = 0;
  let billedMs = 0;
  let totalMs = 0;
  let cpuMs = 0;
  let paused = 0;
  server.on('request', (_request, response) => {
    if (paused > 0) return;
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    response.once('finish', () => {
      const ms = performance.now() - started;
      const cpu = process.cpuUsage(cpuBefore);
      requests++;
      totalMs += ms;
      cpuMs += (cpu.user + cpu.system) / 1000;
      billedMs += Math.max(1, Math.ceil(ms));
    });
  });
  return {
    snapshot: () => ({ requests, billedMs, ms: totalMs, cpuMs }),
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
