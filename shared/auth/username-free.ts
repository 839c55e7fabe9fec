import { authenticators } from '../entities/authenticator.ts';
import { invalidField } from '../errors/api-error.ts';
import type { Deps } from '../ports/deps.ts';
import { uniqueValueFreeOp } from '../store/partial-update.ts';
import type { WriteOp } from '../store/write-op.ts';

/**
 * The check, committed with a updb enrollment, that no authenticator holds its username yet (so the identity can
 * still take it when it enrolls); a taken one is 400 naming `field`, as the caller sent it.
 */
export function usernameFreeOp(deps: Deps, username: string, field: string): WriteOp {
  return uniqueValueFreeOp(deps.store, authenticators.collection, 'username', username, () =>
    invalidField(field, `duplicate value '${username}' in unique index on authenticators store`, username),
  );
}
