import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { createApiSessionOps } from '#shared/auth/api-session-store.ts';
import { mapBounded } from '#shared/map-bounded.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { API_SESSIONS_COLLECTION } from '#shared/store/api-session-items.ts';
import { counterOp } from '#shared/store/entity-store.ts';
import { PREFIXES } from '#shared/store/keys.ts';
import type { WriteOp } from '#shared/store/write-op.ts';

/**
 * Stores `howMany` password-login API sessions of an identity straight through the store (what a login writes, without
 * a login's throttling or cost), idle for `idleMinutes` already; answers each session's id and token. They are opened
 * by `authenticatorId` (and end with it) when one is given, else by an authenticator nobody stores; on the client API,
 * or (`legacy`) as sessions were stored before the API was recorded; as POST /authenticate's, or of the `kind` given
 * (`oidc`: as the OIDC provider's token exchange stores them).
 */
export function storeApiSessions(
  deps: Deps,
  identityId: string,
  howMany: number,
  idleMinutes = 0,
  authenticatorId?: string,
  options: { readonly legacy?: boolean; readonly kind?: 'oidc' } = {},
): Promise<{ id: string; token: string }[]> {
  const then: Deps = { ...deps, now: () => new Date(deps.now().getTime() - idleMinutes * 60_000) };
  return mapBounded(Array.from({ length: howMany }), 8, async () => {
    const { session, token, ops } = await createApiSessionOps(then, {
      identityId,
      authenticatorId: authenticatorId ?? 'stored',
      endsWithAuthenticator: authenticatorId !== undefined,
      ipAddress: '127.0.0.1',
      openedOn: 'client',
      ...(options.kind === undefined ? {} : { kind: options.kind }),
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

/**
 * The same for thousands of sessions, fast: the items a login writes (each session and its id pointer) put 25 to a
 * batch, the sessions' counter moved once, and no change for the routers (a router that connects after reads them in
 * its full state). For a test that needs many sessions of one identity and not how each was written.
 */
export async function storeManyApiSessions(
  deps: Deps,
  identityId: string,
  howMany: number,
): Promise<{ id: string; token: string }[]> {
  const made = await mapBounded(Array.from({ length: howMany }), 32, () =>
    createApiSessionOps(deps, {
      identityId,
      authenticatorId: 'stored',
      endsWithAuthenticator: false,
      ipAddress: '127.0.0.1',
      openedOn: 'client',
      configTypes: [],
      totpPending: false,
      extJwtPending: false,
    }),
  );
  const items = made.flatMap(({ ops }) =>
    ops.flatMap((op) => {
      const item = op.item.Put?.Item;
      return item && !String(item.PK).startsWith(PREFIXES.ctrlChanges) ? [item] : [];
    }),
  );
  const batches = Array.from({ length: Math.ceil(items.length / 25) }, (_, index) =>
    items.slice(index * 25, index * 25 + 25),
  );
  await mapBounded(batches, 4, async (batch) => {
    let requests = batch.map((Item) => ({ PutRequest: { Item } }));
    while (requests.length > 0) {
      const { UnprocessedItems } = await deps.store.db.send(
        new BatchWriteCommand({ RequestItems: { [deps.store.tableName]: requests } }),
      );
      requests = (UnprocessedItems?.[deps.store.tableName] ?? []) as typeof requests;
    }
  });
  await deps.store.transact([counterOp(deps.store.tableName, API_SESSIONS_COLLECTION, howMany)]);
  return made.map(({ session, token }) => ({ id: session.id, token }));
}
