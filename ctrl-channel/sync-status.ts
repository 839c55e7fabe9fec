import type { Deps } from '#shared/ports/deps.ts';
import { type RouterListeners, type RouterSyncStatus, recordRouterSync } from '#shared/store/router-connections.ts';
import type { ConnectedRouter } from './control-plane.ts';

/**
 * Records how far an edge router's sync has come (`SYNC_DONE` once its state is sent, `SYNC_ERROR` when sending it
 * failed), and what it said of its listeners, on its connection item: only while the connection is the router's
 * current one, so a replaced connection never overwrites a newer one's. A write that fails is logged, never thrown:
 * the status is shown, the channel works without it. Transit routers have no edge sync: nothing is written.
 */
export async function recordSyncStatus(
  deps: Deps,
  { router, channel, connectionId }: ConnectedRouter,
  syncStatus: RouterSyncStatus | undefined,
  listeners?: RouterListeners,
): Promise<void> {
  if (router.kind !== 'edge-router') return;
  try {
    await recordRouterSync(deps.store, 'edge-routers', router.id, connectionId, {
      ...(syncStatus ? { syncStatus } : {}),
      ...(listeners ? { listeners } : {}),
    });
  } catch (error) {
    channel.log.failed('ctrl channel sync status not recorded', { syncStatus, detail: (error as Error).message });
  }
}
