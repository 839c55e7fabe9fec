import type { ControlFeatureFactory } from './control-plane.ts';
import { ContentType, resultMessage } from './message.ts';

/**
 * A router told a v2 version reports its network interfaces (1052) once connected and whenever they change, and
 * retries until a successful result answers it. The interfaces are not kept (the reference shows them on
 * `GET /routers/{id}`; this controller does not yet): the report is acknowledged, so the router stops retrying, and
 * dropped.
 */
export const routerInterfaces: ControlFeatureFactory = () => ({
  bind({ channel }) {
    channel.handle(ContentType.updateRouterInterfaces, (request) => {
      channel.reply(request, resultMessage(true));
    });
  },
});
