import type { ConnectedRouter, ControlFeatureFactory } from './control-plane.ts';
import type { LinkStateUpdate, MetricsReport, RouterLinks } from './link-reports.ts';
import { type ChannelMessage, ContentType } from './message.ts';
import { decodeBody } from './protobuf-codec.ts';

/**
 * Links between routers, as routers report them (`link-reports.ts` applies each to the table and the graph): the
 * links a router dialed (RouterLinks, 1035: those it makes as it makes them, all it holds when it connects), their
 * underlay connections (LinkState, 1053), and what each end measures of their latency (Metrics, 1007, every minute
 * by default). None is answered: a body that does not read is logged and dropped by the channel, as malformed; a
 * table that fails is logged, and the router's next report (or reconnect) brings the same again. Link faults come
 * with the other faults (`circuit-ends.ts`). Edge and transit routers alike.
 */
export const links: ControlFeatureFactory = ({ linkReports }) => {
  /** A handler that reads its body now (a malformed one is the router's) and logs a failure to apply it. */
  const handled =
    <T>(router: ConnectedRouter, typeName: string, event: string, apply: (body: T) => Promise<void>) =>
    (message: ChannelMessage) => {
      const body = decodeBody<T>(typeName, message.body);
      return apply(body).catch((error: unknown) => router.channel.log.failure(message, event, error));
    };
  return {
    bind(router) {
      const { channel } = router;
      channel.handle(
        ContentType.routerLinks,
        handled<RouterLinks>(router, 'ctrl.RouterLinks', 'ctrl channel links report not applied', (report) =>
          linkReports.routerLinks(router, report),
        ),
      );
      channel.handle(
        ContentType.linkState,
        handled<LinkStateUpdate>(router, 'ctrl.LinkStateUpdate', 'ctrl channel link state not applied', (update) =>
          linkReports.linkState(router, update),
        ),
      );
      channel.handle(
        ContentType.metrics,
        handled<MetricsReport>(router, 'metrics.MetricsMessage', 'ctrl channel metrics not applied', (report) =>
          linkReports.metrics(router, report),
        ),
      );
    },
  };
};
