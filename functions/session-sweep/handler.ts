import type { ScheduledEvent } from 'aws-lambda';
import { defaultDeps } from '#functions/create-deps.ts';
import { type SweepResult, sweepEndedSessions } from '#shared/auth/ended-sessions-sweep.ts';
import { taskHandler } from '#shared/http/task-handler.ts';

/**
 * The ended sessions' sweep (`shared/auth/ended-sessions-sweep.ts`), run by an EventBridge schedule once a minute. The
 * event carries nothing the run needs: it resumes from the mark its last run left. A failure is thrown, not caught:
 * the invocation fails, which the function's errors alarm counts, and the next minute's run tries again from the same
 * mark. Each run writes one line, so its log shows the sweep alive and what it took; one that finds another still
 * running (its lease in the table) does nothing.
 */
export const handler = taskHandler(defaultDeps, async (_event: ScheduledEvent): Promise<SweepResult> => {
  const deps = defaultDeps();
  const swept = await sweepEndedSessions(deps);
  deps.logger.info('ended sessions swept', { ...swept });
  // The notices it could not sweep are left for the next run; the invocation fails so that the alarm counts it.
  if (swept.failed > 0) throw new Error(`${swept.failed} ended sessions' notices not swept: the next run tries again`);
  return swept;
});
