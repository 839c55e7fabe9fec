import type { Deps } from '../ports/deps.ts';
import { countAttempt, recordFailure, WindowFull, type WindowLimit } from './fixed-window-limiter.ts';

/**
 * Login throttling, shaped so that nobody can lock a user out by guessing wrong for them:
 *
 * - per source address (`perIp`): every login and enrollment attempt of one address;
 * - per source address and username (`perSourceAndUsername`): one address guessing one user's password is slowed to
 *   this many tries a window, and only that address is;
 * - per username (`perUsername`): a budget across all addresses, against a guesser with many addresses. When it is
 *   spent, an address that has failed for the username this window is refused, while an address with no failure
 *   goes on through a second lane of the same size: the right password from anywhere else is slowed (at worst to
 *   the next window, when attackers with many fresh addresses fill that lane too), never blocked for good, and an
 *   admin logging in from their own machine during an attack gets in.
 *
 * All counters of an attempt are counted in one parallel wave, before any hash or signature is paid for.
 */
function limitsOf(deps: Deps) {
  const { perIp, perUsername, perSourceAndUsername, windowSeconds } = deps.config.loginRateLimit;
  const window = (limit: number): WindowLimit => ({ limit, windowSeconds });
  return { ip: window(perIp), sourceAndUser: window(perSourceAndUsername), user: window(perUsername) };
}

const sourceAndUserKey = (sourceIp: string, username: string) => `${sourceIp}\n${username}`;

/** Counts a login or enrollment attempt (see above); 429 `SERVER_TOO_MANY_REQUESTS` with `Retry-After` when refused. */
export async function limitLoginAttempt(deps: Deps, sourceIp: string, username?: string): Promise<void> {
  const limits = limitsOf(deps);
  if (username === undefined || username === '') {
    await countAttempt(deps, 'login-ip', sourceIp, limits.ip);
    return;
  }
  const [ip, sourceAndUser, user] = await Promise.allSettled([
    countAttempt(deps, 'login-ip', sourceIp, limits.ip),
    countAttempt(deps, 'login-ip-user', sourceAndUserKey(sourceIp, username), limits.sourceAndUser),
    countAttempt(deps, 'login-user', username, limits.user),
  ]);
  if (ip.status === 'rejected') throw ip.reason;
  if (sourceAndUser.status === 'rejected') throw sourceAndUser.reason;
  if (user.status === 'fulfilled') return;
  if (!(user.reason instanceof WindowFull) || sourceAndUser.value.failures > 0) throw user.reason;
  // The username's budget is spent, but not by this address: the second lane.
  await countAttempt(deps, 'login-user-clean', username, limits.user);
}

/** Marks the address as having failed for the username this window (a wrong password). */
export async function recordLoginFailure(deps: Deps, sourceIp: string, username: string): Promise<void> {
  await recordFailure(deps, 'login-ip-user', sourceAndUserKey(sourceIp, username), limitsOf(deps).sourceAndUser);
}

/**
 * Counts an MFA code attempt against its source address (the login budget: codes are credentials too) and its
 * identity, in one wave, before the code is checked. A TOTP code is one of a million and about three are valid at a
 * time, so the identity's window (10 codes per 10 minutes by default) is what keeps guessing impractical whatever the
 * number of partial sessions or addresses: about a year of steady guessing for even odds. Only someone who already
 * passed the first factor can spend it.
 */
export async function limitMfaAttempt(deps: Deps, sourceIp: string, identityId: string): Promise<void> {
  const { perIdentity, windowSeconds } = deps.config.mfaRateLimit;
  await Promise.all([
    countAttempt(deps, 'login-ip', sourceIp, limitsOf(deps).ip),
    countAttempt(deps, 'mfa-identity', identityId, { limit: perIdentity, windowSeconds }),
  ]);
}
