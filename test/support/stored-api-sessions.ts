import { createApiSessionOps } from '#shared/auth/api-session-store.ts';
import { mapBounded } from '#shared/map-bounded.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { WriteOp } from '#shared/store/write-op.ts';

/**
 * Stores `howMany` password-login API sessions of an identity straight through the store (what a login writes, without
 * a login's throttling or cost), idle for `idleMinutes` already; answers each session's id and token. They are opened
 * by `authenticatorId` (and end with it) when one is given, else by an authenticator nobody stores; on the client API,
 * or (`legacy`) as sessions were stored before the API was recorded.
 */
export function storeApiSessions(
  deps: Deps,
  identityId: string,
  howMany: number,
  idleMinutes = 0,
  authenticatorId?: string,
  options: { readonly legacy?: boolean } = {},
): Promise<{ id: string; token: string }[]> {
  const then: Deps = { ...deps, now: () => new Date(deps.now().getTime() - idleMinutes * 60_000) };
  return mapBounded(Array.from({ length: howMany }), 8, async () => {
    const { session, token, ops } = await createApiSessionOps(then, {
      identityId,
      authenticatorId: authenticatorId ?? 'stored',
      endsWithAuthenticator: authenticatorId !== undefined,
      ipAddress: '127.0.0.1',
      openedOn: 'client',
      configTypes: [],
      totpPending: false,
      extJwtPending: false,
    });
    // A session as stored before the API it was opened on was recorded: the same item without `openedOn`.
    await then.store.transact(options.legacy ? ops.map(withoutOpenedOn) : ops);
    return { id: session.id, token };
  });
}

function withoutOpenedOn(op: WriteOp): WriteOp {
  const put = op.item.Put;
  if (!put?.Item || !('openedOn' in put.Item)) return op;
  const { openedOn: _openedOn, ...item } = put.Item;
  return { ...op, item: { ...op.item, Put: { ...put, Item: item } } };
}
