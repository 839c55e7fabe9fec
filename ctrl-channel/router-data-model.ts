import { mapBounded } from '#shared/map-bounded.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { CtrlChange } from '#shared/store/ctrl-changes.ts';
import type { ConnectedRouter, ControlFeatureFactory } from './control-plane.ts';
import { POLL_GRACE_MS } from './ctrl-change-poll.ts';
import { ROUTER_FRAME_LIMITS } from './frame-codec.ts';
import { ContentType, Header } from './message.ts';
import { decodeBody, encodeBodyWithEncoded } from './protobuf-codec.ts';
import { buildRouterDataState, type RouterDataState, timelineIdOf } from './router-data-state.ts';
import { routersReachedBy } from './router-reach.ts';

/** A router's request for the data model (20505): right after it connects, then renewed every five minutes. */
interface SubscribeToDataModelRequest {
  readonly currentIndex: number;
  readonly subscriptionDurationSeconds: number;
  readonly renew: boolean;
  readonly timelineId: string;
  readonly subscriptionId: string;
}

/** The last model sent to a router: what a renewal or a change's push is compared with. */
interface SentModel {
  readonly subscriptionId: string;
  readonly timelineId: string;
  readonly endIndex: number;
  readonly digest: string;
  /** The identities it held: an identity's end (its disable, its delete) changes only those routers' models. */
  readonly identityIds: ReadonlySet<string>;
}

/** A connected router's model as the change log reaches it. */
interface RouterModel {
  readonly connected: ConnectedRouter;
  /** Whether the model last sent holds the identity. */
  holds(identityId: string): boolean;
  /** Builds the model again and sends it under the current subscription when it changed (never before a subscription). */
  refresh(): void;
}

/**
 * How the warning of a model that did not fit in a message begins: the routers' endpoint's log is counted by it
 * (`cdk/controller-monitoring.ts`), as policies left out refuse OIDC sessions on that router.
 */
export const ROUTER_DATA_MODEL_TOO_LARGE = 'router data model too large';

export interface RouterDataModelOptions {
  /** How long after a change its push is built once more (the policies' indexes may lag the write). */
  readonly settleMs: number;
}

/**
 * The routers a page of the change log concerns. Every router's on a `services` notice (a service, config, config type,
 * service policy, posture check or identity's config override changed: any router's policy part may hold it) and on a
 * `reach` notice naming no identity (an edge router policy, a router's role attributes). On a notice naming an
 * identity, a `reach` (it is new, enabled, or has new role attributes) or an `ended` (it was disabled, locked, deleted),
 * those whose model holds it, the router whose own identity it is (tunneling turned on creates it, off deletes it), and
 * for a `reach` the routers it may use now (read once an identity a page, a few at once; every router's when that read
 * fails).
 */
async function concerned(
  deps: Deps,
  changes: readonly CtrlChange[],
  models: ReadonlyMap<string, RouterModel>,
): Promise<Set<RouterModel>> {
  const due = new Set<RouterModel>();
  const named = new Set<string>();
  const reaching = new Set<string>();
  for (const change of changes) {
    if (change.kind === 'services' || (change.kind === 'reach' && change.identityId === undefined)) {
      return new Set(models.values());
    }
    if (change.kind === 'reach' && change.identityId !== undefined) {
      named.add(change.identityId);
      reaching.add(change.identityId);
    } else if (change.kind === 'ended') named.add(change.ended.identityId);
  }
  const reached = await mapBounded([...reaching], REACH_READS, (identityId) =>
    routersReachedBy(deps, identityId).catch(() => new Set(models.keys())),
  );
  const reachedRouters = new Set(reached.flatMap((routers) => [...routers]));
  for (const [routerId, model] of models) {
    if (named.has(routerId) || reachedRouters.has(routerId) || [...named].some((id) => model.holds(id))) due.add(model);
  }
  return due;
}

/** Identities whose routers are read at once for one page of the change log. */
const REACH_READS = 8;

/**
 * The router data model (issue 30): a v2 edge router verifies an SDK's Dial and Bind session JWTs with a public key it
 * learns only from this model, so no Dial or Bind works without it. Each subscription request (20505) is answered with
 * a full DataState (20500) under the request's subscription id (header 1026): the public keys and the identities that
 * may use the router with the service policies that grant them, and for a tunneling router what its own identity is
 * granted (`router-data-state.ts`). A full state replaces the router's model, so there is no change log to keep: a
 * renewal is answered with nothing when the model built again is what was last sent (as the reference answers a
 * router that is up to date), else with a fresh full state at a higher index. A router renews every five minutes
 * (checked every 30 s); the reference tells a router of a change at once, and a router checks OIDC sessions' Dial and
 * Bind, closes what an identity loses and a disabled identity's channels, and hosts and intercepts (a tunneler), by
 * its model. So every router is sent a fresh full state under its current subscription (which the router takes at any
 * time) within a second or two of a change that concerns it ({@link concerned}), and again once the indexes have
 * settled, each only when the model built differs from what it holds.
 */
export function routerDataModelFeature(
  options: RouterDataModelOptions = { settleMs: POLL_GRACE_MS },
): ControlFeatureFactory {
  return ({ deps, changes }) => {
    const models = new Map<string, RouterModel>();
    const timers = new Set<NodeJS.Timeout>();
    let closed = false;

    changes.listen(async (page) => {
      // Not awaited: finding the routers an identity may use takes reads, which the poll's other listeners (the API
      // sessions a router waits for) need not wait for; a push builds what is there when it runs.
      void concerned(deps, page, models).then((due) => {
        if (closed) return;
        for (const model of due) {
          model.refresh();
          const timer = setTimeout(() => {
            timers.delete(timer);
            model.refresh();
          }, options.settleMs);
          timer.unref();
          timers.add(timer);
        }
      });
    });

    return {
      bind(connected) {
        const { router, channel } = connected;
        let sent: SentModel | undefined;
        // One build at a time, in order: a renewal or a push is compared with what the one before it sent.
        let answering: Promise<void> = Promise.resolve();
        let refreshQueued = false;

        function send(subscriptionId: string, timelineId: string, state: RouterDataState, cause: string): void {
          // Milliseconds since the epoch: above what any endpoint sent this router before (clocks apart by less than
          // the time between two changes), and above what this one sent on the channel in any case.
          const endIndex = Math.max(deps.now().getTime(), (sent?.endIndex ?? 0) + 1);
          channel.send({
            contentType: ContentType.dataState,
            headers: new Map(
              subscriptionId ? [[Header.routerDataModelSubscriptionId, Buffer.from(subscriptionId, 'utf8')]] : [],
            ),
            body: encodeBodyWithEncoded('edge.DataState', 'events', state.encodedEvents, { endIndex, timelineId }),
          });
          sent = {
            subscriptionId,
            timelineId,
            endIndex,
            digest: state.digest,
            identityIds: new Set(state.identityIds),
          };
          const { policies, tunneler } = state;
          const detail = {
            endIndex,
            cause,
            identities: state.identityCount,
            omittedIdentities: state.omittedIdentities,
            services: policies.services,
            servicePolicies: policies.servicePolicies,
            postureChecks: policies.postureChecks,
            ...(policies.omitted ? { omittedPolicies: true } : {}),
            ...(tunneler
              ? { tunnelerServices: tunneler.services, tunnelerServicePolicies: tunneler.servicePolicies }
              : {}),
          };
          // One line naming all that was left out (`ROUTER_DATA_MODEL_TOO_LARGE` counts them).
          const leftOut = [
            ...(tunneler?.omitted ? ['tunneler'] : []),
            ...(policies.omitted ? ['policies'] : []),
            ...(state.omittedIdentities > 0 ? ['identities'] : []),
          ];
          if (leftOut.length > 0)
            channel.log.warn(`${ROUTER_DATA_MODEL_TOO_LARGE}: ${leftOut.join(', ')} left out`, detail);
          else channel.log.info('router data model sent', detail);
        }

        async function build() {
          return Promise.all([
            timelineIdOf(deps),
            buildRouterDataState(deps, router, ROUTER_FRAME_LIMITS.maxBodyBytes),
          ]);
        }

        async function answer(request: SubscribeToDataModelRequest): Promise<void> {
          const [timelineId, state] = await build();
          const upToDate =
            request.renew &&
            sent?.subscriptionId === request.subscriptionId &&
            sent.timelineId === timelineId &&
            request.timelineId === timelineId &&
            sent.digest === state.digest;
          if (upToDate || channel.closeReason !== undefined) return;
          send(request.subscriptionId, timelineId, state, request.renew ? 'renewal' : 'subscription');
        }

        /** A change's push: under the subscription last answered, only what differs from what it holds. */
        async function push(): Promise<void> {
          refreshQueued = false;
          const current = sent;
          if (!current || channel.closeReason !== undefined) return;
          const [timelineId, state] = await build();
          if (state.digest === current.digest && timelineId === current.timelineId) return;
          if (channel.closeReason !== undefined || sent !== current) return;
          send(current.subscriptionId, timelineId, state, 'change');
        }

        function queue(work: () => Promise<void>, failed: string): Promise<void> {
          answering = answering.then(work).catch((error: Error) =>
            // Not sent: the router's next renewal is answered with a full state (nothing was recorded as sent).
            channel.log.failed(failed, { detail: error.message }),
          );
          return answering;
        }

        channel.handle(ContentType.subscribeToDataModelRequest, (message) => {
          // As the reference, a request that does not decode is dropped and the channel kept (the router subscribes
          // again within five minutes): the channel logs and counts it (`channel-log.ts`).
          const request = decodeBody<SubscribeToDataModelRequest>('edge.SubscribeToDataModelRequest', message.body);
          return queue(() => answer(request), 'router data model not sent');
        });

        const model: RouterModel = {
          connected,
          holds: (identityId) => sent?.identityIds.has(identityId) === true,
          refresh() {
            // One push waiting is enough: it builds what is there when it runs.
            if (refreshQueued || sent === undefined) return;
            refreshQueued = true;
            void queue(push, 'router data model change not sent');
          },
        };
        models.set(router.id, model);
        channel.onClose(() => {
          if (models.get(router.id) === model) models.delete(router.id);
        });
      },
      close() {
        closed = true;
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
      },
    };
  };
}

/** The router data model as the endpoint runs it. */
export const routerDataModel: ControlFeatureFactory = routerDataModelFeature();
