import type { ControlFeatureFactory } from './control-plane.ts';

/**
 * A router disabled, re-enrolled or deleted loses its control channel within about a second of the change, on
 * whichever endpoint holds it: the change logs a `router-ended` notice (`EntityDefinition.routerNotices`) that every
 * endpoint with routers reads (`ctrl-change-poll.ts`), and the one holding the channel closes it, which records the
 * router offline. The router cannot come back: its certificate is refused at connect while it is disabled, and for
 * good once re-enrolled (the fingerprint it enrolled with is cleared) or deleted. A router whose certificate check
 * passed just before the change is caught when its connection is recorded (`putRouterConnection` requires the router
 * enabled and its fingerprint unchanged), which comes after it is registered here.
 */
export const routerRevocation: ControlFeatureFactory = (context) => {
  context.changes.listen(async (changes) => {
    for (const change of changes) {
      if (change.kind !== 'router-ended') continue;
      const connected = context.connected(change.routerId);
      if (!connected) continue;
      connected.channel.log.info('ctrl channel closing: the router was disabled, re-enrolled or deleted');
      connected.channel.close('the router was disabled, re-enrolled or deleted');
    }
  });
  return {};
};
