import type { Deps } from '../deps.ts';
import type { PostureCheck } from '../entities/posture-check.ts';
import type { PostureData } from './posture-data.ts';
import { readPostureData } from './posture-data.ts';
import { evaluateCheck } from './posture-evaluation.ts';

export interface PostureQueryResult {
  readonly isPassing: boolean;
  readonly timeout: number;
  readonly timeoutRemaining: number;
}

/** The state of each check (by id) for posture data already read (e.g. in the same wave as other reads). */
export function postureResultsOf(
  checks: readonly PostureCheck[],
  data: PostureData,
  now: Date,
): Map<string, PostureQueryResult> {
  return new Map(checks.map((check) => [check.id, evaluateCheck(check, data, now)]));
}

/**
 * The state of each posture check (by id) for the caller's API session, from its stored posture responses: one
 * strongly consistent read (none when there are no checks). With no data, every check fails.
 */
export async function postureResults(
  deps: Deps,
  caller: { readonly identityId: string; readonly apiSessionId: string },
  checks: readonly PostureCheck[],
  now: Date,
): Promise<Map<string, PostureQueryResult>> {
  if (checks.length === 0) return new Map();
  const { data } = await readPostureData(deps, caller.apiSessionId);
  return postureResultsOf(checks, data, now);
}
