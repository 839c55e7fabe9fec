import { type Terminator, terminators } from '#shared/entities/terminator.ts';
import { ConcurrentModificationError } from '#shared/store/entity-store.ts';
import { referrerIds } from '#shared/store/index-queries.ts';
import { withOptimisticRetry } from '#shared/store/optimistic-retry.ts';
import { packTransactions } from '#shared/store/pack-transactions.ts';
import type { ConnectedRouter, ControlFeatureFactory } from './control-plane.ts';
import { type CheckedSession, checkEdgeSession } from './edge-session-check.ts';
import { type ChannelMessage, ContentType, EdgeHeader, resultMessage, uint32Header } from './message.ts';
import { decodeBody, encodeBody } from './protobuf-codec.ts';
import {
  checkedAddress,
  checkedCost,
  checkedHostedFields,
  checkedPrecedence,
  createAnswer,
  createOrTakeResent,
  hostedTerminator,
  logRefusal,
  refusalOf,
  updateOwnTerminator,
} from './terminator-requests.ts';

/** The binding of the terminators an edge router hosts for its SDKs. */
const EDGE_BINDING = 'edge';
/** The binding of those a tunneling router hosts itself (`tunnel-terminators.ts`), which it re-sends alike. */
const TUNNEL_BINDING = 'tunnel';

/**
 * How long a router has, once connected, to re-send the terminators it still hosts (the reference's router re-sends
 * them about ten seconds after it reconnects) before the ones it did not re-send are deleted.
 */
export const DEFAULT_RECONFIRM_GRACE_MS = 60_000;

interface CreateTerminatorV2Request {
  readonly address: string;
  readonly sessionToken: string;
  readonly apiSessionToken: string;
  readonly peerData: Readonly<Record<string, Buffer>>;
  readonly cost: number;
  /** The enum's name, or its number when the router sent one this schema does not know. */
  readonly precedence: string | number;
  readonly instanceId: string;
  readonly instanceSecret: Buffer;
}

interface UpdateTerminatorRequest {
  readonly sessionToken: string;
  readonly apiSessionToken: string;
  readonly terminatorId: string;
  readonly cost: number;
  readonly precedence: string | number;
  readonly updatePrecedence: boolean;
  readonly updateCost: boolean;
}

/**
 * Whether a stored terminator is one this router may re-send or update for the SDK whose session it presents: an
 * `edge` terminator on this router, of the session's service and hosting identity. Every other is refused with the
 * same words whoever holds it (another router, service, identity, or an administrator's binding), so a router, whose
 * certificate may be an attacker's, learns nothing of the terminators that are not its SDKs'.
 */
function isOwnTerminator(terminator: Terminator, routerId: string, checked: CheckedSession): boolean {
  return (
    terminator.binding === EDGE_BINDING &&
    terminator.router === routerId &&
    terminator.service === checked.service.id &&
    terminator.hostId === checked.identity.id
  );
}

/**
 * A router's terminators: what its SDKs host. The router asks on an SDK's behalf (a Bind, an update of its cost or
 * precedence, an unbind) and the controller checks the SDK's session as the reference does
 * (`edge-session-check.ts`); circuits then choose among the terminators of connected routers
 * (`#shared/store/usable-terminators.ts: storedTerminatorsOf`, kept in memory by `terminator-cache.ts`, which each write here drops at once
 * for its service). A terminator the router does not re-send within a grace period after it
 * connects is deleted: its SDK is gone (the router restarted, or unbound while the controller could not hear it).
 */
export function terminatorsFeature(
  options: { readonly reconfirmGraceMs: number } = { reconfirmGraceMs: DEFAULT_RECONFIRM_GRACE_MS },
): ControlFeatureFactory {
  return (context) => {
    const { deps } = context;
    const sweeps = new Set<NodeJS.Timeout>();

    /** Creates the terminator, or takes a re-sent one as it is (its cost and precedence updated, this connection's). */
    async function createTerminator(connected: ConnectedRouter, request: CreateTerminatorV2Request): Promise<void> {
      const routerId = connected.router.id;
      const address = checkedAddress(request.address);
      const checked = await checkEdgeSession(deps, routerId, request, 'Bind');
      const doc = hostedTerminator(connected, deps.now(), {
        address,
        service: checked.service.id,
        binding: EDGE_BINDING,
        hostId: checked.identity.id,
        ...checkedHostedFields(request),
      });
      await createOrTakeResent(deps, connected, doc, (stored) => isOwnTerminator(stored, routerId, checked));
      // This endpoint's next dial sees it at once; the write's notice tells every endpoint within seconds.
      context.terminatorCache.forget(doc.service);
    }

    async function answerCreate(
      connected: ConnectedRouter,
      message: ChannelMessage,
      creating: Map<string, Promise<void>>,
    ): Promise<void> {
      const { channel } = connected;
      // A body that does not decode names no terminator to answer for: dropped (the channel logs and counts it), as
      // the reference drops it; the router asks again later.
      const request = decodeBody<CreateTerminatorV2Request>('edge.CreateTerminatorV2Request', message.body);
      let response: object;
      const created = createTerminator(connected, request);
      const settled = created.then(
        () => {},
        () => {},
      );
      creating.set(request.address, settled);
      try {
        await created;
        response = createAnswer(request.address);
      } catch (error) {
        const refusal = refusalOf(error);
        logRefusal(connected, message, 'terminator refused', request.address, refusal, error);
        response = createAnswer(request.address, refusal);
      }
      if (creating.get(request.address) === settled) creating.delete(request.address);
      channel.reply(message, {
        contentType: ContentType.createTerminatorV2Response,
        body: encodeBody('edge.CreateTerminatorV2Response', response),
      });
    }

    async function updateTerminator(connected: ConnectedRouter, request: UpdateTerminatorRequest): Promise<void> {
      const routerId = connected.router.id;
      const checked = await checkEdgeSession(deps, routerId, request, 'Bind');
      const updated = await updateOwnTerminator(
        deps,
        request.terminatorId,
        (stored) => isOwnTerminator(stored, routerId, checked),
        {
          ...(request.updateCost ? { cost: checkedCost(request.cost) } : {}),
          ...(request.updatePrecedence ? { precedence: checkedPrecedence(request.precedence) } : {}),
        },
      );
      context.terminatorCache.forget(updated.service);
    }

    async function answerUpdate(connected: ConnectedRouter, message: ChannelMessage): Promise<void> {
      const { channel } = connected;
      let terminatorId = '';
      try {
        const request = decodeBody<UpdateTerminatorRequest>('edge.UpdateTerminatorRequest', message.body);
        terminatorId = request.terminatorId;
        await updateTerminator(connected, request);
        channel.reply(message, { contentType: ContentType.edgeUpdateTerminatorResponse });
      } catch (error) {
        const refusal = refusalOf(error);
        logRefusal(connected, message, 'terminator update refused', terminatorId, refusal, error);
        channel.reply(message, {
          contentType: ContentType.error,
          headers: new Map([[EdgeHeader.errorCode, uint32Header(refusal.code)]]),
          body: Buffer.from(refusal.message),
        });
      }
    }

    /**
     * Deletes the named terminators this router hosts: an id of another router's is left alone (the reference deletes
     * whatever is named; a router has no business with another's), an unknown one is already gone. The batch (the
     * reference's router sends up to 50) goes in as few transactions as fit, so one that fits commits all or nothing;
     * each delete is version-checked, and a terminator changed meanwhile has the batch read again. The router hears
     * of success only once every transaction committed; after a failure it sends the batch again, and the terminators
     * an earlier transaction deleted are then unknown, which is no failure.
     */
    async function removeTerminators(
      connected: ConnectedRouter,
      message: ChannelMessage,
      creating: ReadonlyMap<string, Promise<void>>,
    ): Promise<void> {
      const { channel } = connected;
      const routerId = connected.router.id;
      try {
        const { terminatorIds } = decodeBody<{ terminatorIds: string[] }>(
          'ctrl.RemoveTerminatorsRequest',
          message.body,
        );
        // A create still being written would land after this delete and outlive its SDK's unbind: it goes first.
        await Promise.all(terminatorIds.map((id) => creating.get(id)));
        const removed = await withOptimisticRetry(async () => {
          const ours = (await deps.store.getManyStored(terminators, terminatorIds)).filter(
            ({ doc }) => doc.router === routerId,
          );
          const deletes = ours.map(({ doc, version }) => deps.store.deleteOps(terminators, doc, version));
          for (const transaction of packTransactions(deps.store, deletes)) await deps.store.transact(transaction);
          for (const { doc } of ours) context.terminatorCache.forget(doc.service);
          return ours.map(({ doc }) => doc.id);
        });
        if (removed.length > 0) channel.log.info('terminators removed', { terminatorIds: removed });
        channel.reply(message, resultMessage(true));
      } catch (error) {
        channel.log.failure(message, 'terminators not removed', error);
        channel.reply(message, resultMessage(false, 'the terminators could not be removed: try again'));
      }
    }

    /**
     * Deletes the router's edge and tunnel terminators this connection neither created nor had re-sent: nobody hosts
     * them (an administrator's, of another binding, are left alone).
     */
    async function sweepUnconfirmed(connected: ConnectedRouter): Promise<void> {
      const routerId = connected.router.id;
      if (context.connected(routerId) !== connected || connected.channel.closeReason !== undefined) return;
      const ids = await referrerIds(deps.store, { collection: 'edge-routers', id: routerId }, 'terminators');
      const stale = (await deps.store.getManyStored(terminators, ids)).filter(
        ({ doc }) =>
          doc.router === routerId &&
          (doc.binding === EDGE_BINDING || doc.binding === TUNNEL_BINDING) &&
          doc.connectionId !== connected.connectionId,
      );
      for (const { doc, version } of stale) {
        try {
          // Version-checked: one re-sent meanwhile is kept.
          await deps.store.transact(deps.store.deleteOps(terminators, doc, version));
          context.terminatorCache.forget(doc.service);
        } catch (error) {
          if (!(error instanceof ConcurrentModificationError)) throw error;
        }
      }
      if (stale.length > 0) {
        connected.channel.log.info('terminators not re-sent by their router deleted', {
          terminatorIds: stale.map(({ doc }) => doc.id),
        });
      }
    }

    return {
      bind(connected) {
        const { channel } = connected;
        /** The creates being answered, by terminator id. */
        const creating = new Map<string, Promise<void>>();
        // The router sends its create without waiting for a reply and matches the answer by terminator id; the
        // answer replies to it all the same, as the reference's does.
        channel.handle(ContentType.createTerminatorV2Request, (message) => answerCreate(connected, message, creating));
        channel.handle(ContentType.edgeUpdateTerminatorRequest, (message) => answerUpdate(connected, message));
        channel.handle(ContentType.removeTerminatorsRequest, (message) =>
          removeTerminators(connected, message, creating),
        );
        // Health events (20214) are not handled: the reference only counts them in its metrics, and so does nothing
        // this controller shows; the channel drops them.
      },
      start(connected) {
        const timer = setTimeout(() => {
          sweeps.delete(timer);
          sweepUnconfirmed(connected).catch((error: Error) =>
            connected.channel.log.failed('terminators not swept', { detail: error.message }),
          );
        }, options.reconfirmGraceMs);
        sweeps.add(timer);
        connected.channel.onClose(() => {
          clearTimeout(timer);
          sweeps.delete(timer);
        });
      },
      close() {
        for (const timer of sweeps) clearTimeout(timer);
        sweeps.clear();
      },
    };
  };
}

/** The terminators feature as the endpoint runs it. */
export const routerTerminators: ControlFeatureFactory = terminatorsFeature();
