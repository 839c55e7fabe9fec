import type { Deps } from '../ports/deps.ts';
import { type AddressPair, readRememberedStamp, rememberedStampOp } from '../store/remembered-addresses.ts';
import type { WriteOp } from '../store/write-op.ts';

/**
 * Remembered addresses, the API's device cookie: an address that logged in as a subject stays remembered for
 * {@link REMEMBERED_ADDRESS_DAYS} days after its last login, and the throttles let it past the limits that attempts
 * from elsewhere can fill (`login-limits.ts`). A login refreshes the stamp at most once a day, so logging in costs
 * one small read and, once a day per address, one small write.
 */
export const REMEMBERED_ADDRESS_DAYS = 30;
const LIFETIME_SECONDS = REMEMBERED_ADDRESS_DAYS * 86_400;
const REFRESH_SECONDS = 86_400;

/** What a throttle knows of an address for a subject. */
export interface AddressRecall {
  /** Whether the address logged in as the subject within the last {@link REMEMBERED_ADDRESS_DAYS} days. */
  readonly remembered: boolean;
  /** The writes that remember the address after a login from it: none while its stamp is less than a day old. */
  readonly rememberOps: () => WriteOp[];
}

/** Nothing known, nothing to write: for throttles with no lane to let an address into. */
export const NO_RECALL: AddressRecall = { remembered: false, rememberOps: () => [] };

const epochOf = (deps: Deps) => Math.floor(deps.now().getTime() / 1000);

/** Reads whether `address` is remembered for `subject` (one GetItem, eventually consistent). */
export async function recallAddress(deps: Deps, pair: AddressPair): Promise<AddressRecall> {
  const stamp = await readRememberedStamp(deps.store, pair);
  const remembered = stamp !== undefined && stamp.expiresAtEpoch > epochOf(deps);
  return {
    remembered,
    rememberOps: () => {
      const now = epochOf(deps);
      if (remembered && now - stamp.refreshedAtEpoch < REFRESH_SECONDS) return [];
      return [
        rememberedStampOp(deps.store.tableName, pair, {
          refreshedAtEpoch: now,
          expiresAtEpoch: now + LIFETIME_SECONDS,
        }),
      ];
    },
  };
}
