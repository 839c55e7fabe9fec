import type { Deps } from '../ports/deps.ts';
import { type CountedAttempt, countAttempt, giveBack, WindowFull, type WindowLimit } from './fixed-window-limiter.ts';
import { type AddressRecall, NO_RECALL, recallAddress } from './remembered-addresses.ts';

/**
 * Login throttling, shaped so that nobody can lock a user out by guessing wrong for them:
 *
 * - per source address (`perIp`): every login, enrollment and MFA code attempt of one address;
 * - per source address and username (`perSourceAndUsername`): one address guessing one user's password is slowed to
 *   this many tries a window, and only that address is;
 * - per username (`perUsername`): a budget across all addresses, against a guesser with many addresses. When it is
 *   spent, a remembered address of the username (one that logged in as it lately, `remembered-addresses.ts`) goes on
 *   regardless, so attempts from elsewhere never refuse the owner at a machine they logged in from; an address's
 *   first attempt on the username this window goes on through a second lane of the same size, so a new address gets
 *   in too unless more fresh addresses than that lane holds came first (then it waits for the next window: slowed,
 *   never locked); any other attempt is refused. "First" is the (address, username) counter's atomic count, taken
 *   before any password is checked: of simultaneous tries from one address, one at most is its first.
 *
 * All counters of an attempt are counted in one parallel wave, with a login's remembered-address read, before any
 * hash or signature is paid for.
 */
function limitsOf(deps: Deps) {
  const { perIp, perUsername, perSourceAndUsername, windowSeconds } = deps.config.loginRateLimit;
  const window = (limit: number): WindowLimit => ({ limit, windowSeconds });
  return { ip: window(perIp), sourceAndUser: window(perSourceAndUsername), user: window(perUsername) };
}

const pairKey = (sourceIp: string, subject: string) => `${sourceIp}\n${subject}`;

/** Counts an attempt that names nobody (enrollment, certificate, ext-jwt) against its source address alone. */
export async function limitLoginAttempt(deps: Deps, sourceIp: string): Promise<void> {
  await countAttempt(deps, 'login-ip', sourceIp, limitsOf(deps).ip);
}

/**
 * The counts of an address's own limits (its attempts, its attempts on this subject), or their refusal, thrown after
 * giving back what the attempt counted on the subject's window: one address spends no more of a username's or an
 * identity's budget, which every other address shares, than its own limits let it.
 */
async function addressAllowed(
  deps: Deps,
  addressLimits: readonly PromiseSettledResult<CountedAttempt>[],
  subject: PromiseSettledResult<CountedAttempt>,
): Promise<CountedAttempt[]> {
  const refusal = addressLimits.find((outcome) => outcome.status === 'rejected');
  if (!refusal) return addressLimits.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  if (subject.status === 'fulfilled') await giveBack(deps, subject.value);
  throw refusal.reason;
}

/**
 * Counts a password attempt on `username` (see above); 429 `SERVER_TOO_MANY_REQUESTS` with `Retry-After` when refused.
 * Answers what is known of the address for the username, whose `rememberOps` a successful login commits.
 */
export async function limitPasswordAttempt(deps: Deps, sourceIp: string, username: string): Promise<AddressRecall> {
  const limits = limitsOf(deps);
  const [ip, sourceAndUser, user, recall] = await Promise.allSettled([
    countAttempt(deps, 'login-ip', sourceIp, limits.ip),
    countAttempt(deps, 'login-ip-user', pairKey(sourceIp, username), limits.sourceAndUser),
    countAttempt(deps, 'login-user', username, limits.user),
    // Only a username-wide limit has a lane to let a remembered address into.
    limits.user.limit > 0 ? recallAddress(deps, { scope: 'login', subject: username, address: sourceIp }) : NO_RECALL,
  ]);
  const [, pair] = await addressAllowed(deps, [ip, sourceAndUser], user);
  if (recall.status === 'rejected') throw recall.reason;
  if (user.status === 'fulfilled' || recall.value.remembered) return recall.value;
  // "First" needs the pair's own count: with that limit off (no slot) no try is known to be the first.
  if (!(user.reason instanceof WindowFull) || !pair?.slot || pair.hits > 1) throw user.reason;
  // The username's budget is spent, and this is the address's first try on it this window: the second lane.
  await countAttempt(deps, 'login-user-clean', username, limits.user);
  return recall.value;
}

/** An MFA code attempt that the throttle let through: `passed` once the code proved right. */
export interface MfaAttempt {
  /** Gives the attempt back to the identity's windows and remembers the address (writes beside the code's commit). */
  readonly passed: () => Promise<void>;
}

/**
 * Counts an MFA code attempt, in one wave and before the code is checked, against its source address (the login
 * budget: codes are credentials too), the pair (address, identity) (`MFA_RATE_LIMIT_PER_SOURCE_AND_IDENTITY`) and
 * the identity across all addresses (`MFA_RATE_LIMIT_PER_IDENTITY`, a ceiling whatever the number of partial sessions
 * or addresses). Concurrent codes are counted before any is checked, so a burst is bounded; a right code is given
 * back (`passed`), so only wrong codes spend either budget and the owner's own logins never do. An attempt refused by
 * its address's limits gives back its count on the identity, so one address cannot spend more of the ceiling than
 * its own budget. When the ceiling is spent by guessers at other addresses, an address the identity passed MFA from
 * lately (`remembered-addresses.ts`) goes on; a new one waits for the next window. The address is looked up only
 * where it matters, past a full ceiling or after a right code (to refresh it): a wrong code under the ceiling, a
 * guesser's usual try, reads nothing but its counters.
 */
export async function limitMfaAttempt(deps: Deps, sourceIp: string, identityId: string): Promise<MfaAttempt> {
  const { perIdentity, perSourceAndIdentity, windowSeconds } = deps.config.mfaRateLimit;
  const [ip, sourceAndIdentity, identity] = await Promise.allSettled([
    countAttempt(deps, 'login-ip', sourceIp, limitsOf(deps).ip),
    countAttempt(deps, 'mfa-ip-identity', pairKey(sourceIp, identityId), {
      limit: perSourceAndIdentity,
      windowSeconds,
    }),
    countAttempt(deps, 'mfa-identity', identityId, { limit: perIdentity, windowSeconds }),
  ]);
  await addressAllowed(deps, [ip, sourceAndIdentity], identity);
  // Only an identity-wide limit has a lane to let a remembered address into.
  const recall = () =>
    perIdentity > 0 ? recallAddress(deps, { scope: 'mfa', subject: identityId, address: sourceIp }) : NO_RECALL;
  let recalled: AddressRecall | undefined;
  if (identity.status === 'rejected') {
    if (!(identity.reason instanceof WindowFull)) throw identity.reason;
    recalled = await recall();
    if (!recalled.remembered) throw identity.reason;
  }
  const counted = [sourceAndIdentity, identity].flatMap((outcome) =>
    outcome.status === 'fulfilled' ? [outcome.value] : [],
  );
  const remember = async () => {
    const ops = (recalled ?? (await recall())).rememberOps();
    if (ops.length > 0) await deps.store.transact(ops);
  };
  return {
    passed: async () => {
      await Promise.all([...counted.map((attempt) => giveBack(deps, attempt)), remember()]);
    },
  };
}
