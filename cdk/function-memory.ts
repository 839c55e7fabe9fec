/**
 * Each function's Lambda memory in MB, chosen by measurement (`npm run bench -- bill`: the handler's CPU time per
 * request measured in-process, its duration modelled at 256, 512 and 1,024 MB as `bench/lambda-memory.ts` says): the
 * cheapest size under which none of the function's requests is modelled past 100 ms. A fleet's requests all go to
 * `poll` (its poll and its session refresh: one read wave and about a millisecond of CPU each, so 256, where the
 * duration that is mostly waiting on DynamoDB costs a quarter of 1,024's), `client` (its service list: 512, the list's
 * ~19 ms of CPU being 147 ms at 256), `sessions` (its Dial sessions: 512) and `authentication` (its certificate login
 * would take 512, but the same function answers password logins, whose argon2id is ~45 ms of CPU: 155 ms at 512, so it
 * keeps 1,024). Functions the fleet never calls keep `default` until a bench measures them, but for the ended
 * sessions' sweep (`session-sweep`: 256), run once a minute whatever the traffic: a run with nothing to sweep is about
 * 6 ms of CPU and four DynamoDB waves (measured in-process), 57 ms modelled at 256 and 37 at 512, which costs more,
 * and nobody waits for it. The stack reads this (`functionMemoryMb`).
 */
export const FUNCTION_MEMORY_MB = {
  default: 1_024,
  poll: 256,
  client: 512,
  authentication: 1_024,
  sessions: 512,
  'session-sweep': 256,
} as const;

/** The memory of the function of this operation group (or `bootstrap`, `integrity`, `session-sweep`). */
export function functionMemoryMb(functionName: string): number {
  return (FUNCTION_MEMORY_MB as Readonly<Record<string, number>>)[functionName] ?? FUNCTION_MEMORY_MB.default;
}
