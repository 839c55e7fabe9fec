import type { ControlFeatureFactory } from './control-plane.ts';
import { ROUTER_FRAME_LIMITS } from './frame-codec.ts';
import { ContentType, Header } from './message.ts';
import { decodeBody, encodeBodyWithEncoded } from './protobuf-codec.ts';
import { buildRouterDataState, timelineIdOf } from './router-data-state.ts';

/** A router's request for the data model (20505): right after it connects, then renewed every five minutes. */
interface SubscribeToDataModelRequest {
  readonly currentIndex: number;
  readonly subscriptionDurationSeconds: number;
  readonly renew: boolean;
  readonly timelineId: string;
  readonly subscriptionId: string;
}

/** The last model sent to a router: what a renewal is compared with. */
interface SentModel {
  readonly subscriptionId: string;
  readonly timelineId: string;
  readonly endIndex: number;
  readonly digest: string;
}

/**
 * The router data model (issue 30): a v2 edge router verifies an SDK's Dial and Bind session JWTs with a public key it
 * learns only from this model, so no Dial or Bind works without it. Each subscription request (20505) is answered with
 * a full DataState (20500) under the request's subscription id (header 1026): the public keys and the identities that
 * may use the router (`router-data-state.ts`). A full state replaces the router's model, so there is no change log to
 * keep: a renewal is answered with nothing when the model built again is what was last sent (as the reference answers
 * a router that is up to date), else with a fresh full state at a higher index. A router renews every five minutes
 * (checked every 30 s), so an identity deleted, disabled or out of the router's policies leaves its model, and the
 * router closes that identity's connections, within about five and a half minutes.
 */
export const routerDataModel: ControlFeatureFactory = ({ deps }) => ({
  bind({ router, channel }) {
    let sent: SentModel | undefined;
    // One request at a time, in order: a renewal is compared with what the request before it sent.
    let answering: Promise<void> = Promise.resolve();

    async function answer(request: SubscribeToDataModelRequest): Promise<void> {
      const [timelineId, state] = await Promise.all([
        timelineIdOf(deps),
        buildRouterDataState(deps, router, ROUTER_FRAME_LIMITS.maxBodyBytes),
      ]);
      const upToDate =
        request.renew &&
        sent?.subscriptionId === request.subscriptionId &&
        sent.timelineId === timelineId &&
        request.timelineId === timelineId &&
        sent.digest === state.digest;
      if (upToDate || channel.closeReason !== undefined) return;
      // Milliseconds since the epoch: above what any endpoint sent this router before (clocks apart by less than the
      // time between two changes), and above what this one sent on the channel in any case.
      const endIndex = Math.max(deps.now().getTime(), (sent?.endIndex ?? 0) + 1);
      channel.send({
        contentType: ContentType.dataState,
        headers: new Map(
          request.subscriptionId
            ? [[Header.routerDataModelSubscriptionId, Buffer.from(request.subscriptionId, 'utf8')]]
            : [],
        ),
        body: encodeBodyWithEncoded('edge.DataState', 'events', state.encodedEvents, { endIndex, timelineId }),
      });
      sent = { subscriptionId: request.subscriptionId, timelineId, endIndex, digest: state.digest };
      const detail = {
        endIndex,
        renew: request.renew,
        identities: state.identityCount,
        omittedIdentities: state.omittedIdentities,
      };
      if (state.omittedIdentities > 0) channel.log.warn('router data model too large: identities left out', detail);
      else channel.log.info('router data model sent', detail);
    }

    channel.handle(ContentType.subscribeToDataModelRequest, (message) => {
      // As the reference, a request that does not decode is dropped and the channel kept (the router subscribes again
      // within five minutes): the channel logs and counts it (`channel-log.ts`).
      const request = decodeBody<SubscribeToDataModelRequest>('edge.SubscribeToDataModelRequest', message.body);
      answering = answering
        .then(() => answer(request))
        .catch((error: Error) =>
          // Not sent: the router's next renewal is answered with a full state (nothing was recorded as sent).
          channel.log.failed('router data model not sent', { detail: error.message }),
        );
      return answering;
    });
  },
});
