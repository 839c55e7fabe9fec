import type { Caller } from '#shared/auth/resolve-caller.ts';
import type { PostureCheck } from '#shared/entities/posture-check.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { readPostureData } from '#shared/posture/posture-data.ts';
import { evaluateCheck } from '#shared/posture/posture-evaluation.ts';
import type { PostureCheckState } from '#shared/views/client-service-view.ts';

/** How each posture check stands for the caller's API session, from what was read once per request. */
export type PostureEvaluator = (check: PostureCheck) => PostureCheckState;

/**
 * Reads the posture data of the caller's API session (one read, issued in the same wave as the caller's other reads)
 * and evaluates checks against it in memory, as of now.
 */
export async function postureEvaluator(deps: Deps, caller: Caller): Promise<PostureEvaluator> {
  const { data } = await readPostureData(deps, caller.session.id);
  const now = deps.now();
  return (check) => evaluateCheck(check, data, now);
}
