import { sweepEndedSessions } from '#shared/auth/ended-sessions-sweep.ts';
import type { Deps } from '#shared/ports/deps.ts';

/** How often `npm start` sweeps: more often than AWS's schedule, so a local network's table follows its changes. */
export const LOCAL_SWEEP_INTERVAL_MS = 5_000;

/** The scheduled work AWS runs on a schedule (EventBridge), run here on a timer. */
export interface ScheduledTasks {
  stop(): void;
}

/**
 * Runs the ended sessions' sweep (`shared/auth/ended-sessions-sweep.ts`) every `intervalMs`, one run at a time (the
 * scheduled function on AWS has a concurrency of one), each failure logged: the next run tries again.
 */
export function startScheduledTasks(deps: Deps, intervalMs = LOCAL_SWEEP_INTERVAL_MS): ScheduledTasks {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const run = () => {
    sweepEndedSessions(deps)
      .catch((error: Error) => deps.logger.warn('ended sessions not swept', { detail: error.message }))
      .finally(() => {
        if (!stopped) timer = setTimeout(run, intervalMs).unref();
      });
  };
  timer = setTimeout(run, intervalMs).unref();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
