import type { Deps } from '../deps.ts';
import { countAttempt } from './fixed-window-limiter.ts';

/**
 * Counts a login or enrollment attempt against its source address and, when it names one, its username, before it
 * costs a password hash or a signature check. The address is counted first; a flood of one username never locks out
 * another, so an administrator can still log in while someone hammers a user's account.
 */
export async function limitLoginAttempt(deps: Deps, sourceIp: string, username?: string): Promise<void> {
  const limits = deps.config.loginRateLimit;
  await countAttempt(deps, 'login-ip', sourceIp, { limit: limits.perIp, windowSeconds: limits.windowSeconds });
  if (username !== undefined && username !== '') {
    await countAttempt(deps, 'login-user', username, {
      limit: limits.perUsername,
      windowSeconds: limits.windowSeconds,
    });
  }
}
