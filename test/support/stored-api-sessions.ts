import { createApiSessionOps } from '#shared/auth/api-session-store.ts';
import { mapBounded } from '#shared/map-bounded.ts';
import type { Deps } from '#shared/ports/deps.ts';

/**
 * Stores `howMany` password-login API sessions of an identity straight through the store (what a login writes, without
 * a login's throttling or cost), idle for `idleMinutes` already; answers each session's id and token. They are opened
 * by `authenticatorId` (and end with it) when one is given, else by an authenticator nobody stores.
 */
export function storeApiSessions(
  deps: Deps,
  identityId: string,
  howMany: number,
  idleMinutes = 0,
  authenticatorId?: string,
): Promise<{ id: string; token: string }[]> {
  const then: Deps = { ...deps, now: () => new Date(deps.now().getTime() - idleMinutes * 60_000) };
  return mapBounded(Array.from({ length: howMany }), 8, async () => {
    const { session, token, ops } = await createApiSessionOps(then, {
      identityId,
      authenticatorId: authenticatorId ?? 'stored',
      endsWithAuthenticator: authenticatorId !== undefined,
      ipAddress: '127.0.0.1',
      configTypes: [],
      totpPending: false,
      extJwtPending: false,
    });
    await then.store.transact(ops);
    return { id: session.id, token };
  });
}
