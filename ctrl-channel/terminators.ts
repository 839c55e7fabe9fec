import { MAX_PEER_DATA_BYTES, type Terminator, terminators } from '#shared/entities/terminator.ts';
import { ConcurrentModificationError, type Stored } from '#shared/store/entity-store.ts';
import { referrerIds } from '#shared/store/index-queries.ts';
import { withOptimisticRetry } from '#shared/store/optimistic-retry.ts';
import { packTransactions } from '#shared/store/pack-transactions.ts';
import type { ConnectedRouter, ControlFeatureFactory } from './control-plane.ts';
import { type CheckedSession, checkEdgeSession, EdgeErrorCode, EdgeRefusal, RetryHint } from './edge-session-check.ts';
import { type ChannelMessage, ContentType, EdgeHeader, resultMessage, uint32Header } from './message.ts';
import { decodeBody, encodeBody } from './protobuf-codec.ts';

/** The binding of the terminators an edge router hosts for its SDKs. */
const EDGE_BINDING = 'edge';
/** A terminator's cost is a u16 in the reference. */
const MAX_COST = 65_535;
/** The router makes the address (a UUID) and it becomes the terminator's id: bounded as an id is. */
const MAX_ADDRESS_LENGTH = 255;
/** Bounds on what an SDK's Bind brings beside the address, so a terminator always fits its item. */
const MAX_INSTANCE_ID_LENGTH = 255;
const MAX_INSTANCE_SECRET_BYTES = 3072;
const MAX_PEER_DATA_ENTRIES = 16;

/**
 * How long a router has, once connected, to re-send the terminators it still hosts (the reference's router re-sends
 * them about ten seconds after it reconnects) before the ones it did not re-send are deleted.
 */
export const DEFAULT_RECONFIRM_GRACE_MS = 60_000;

const PRECEDENCE_OF: Readonly<Record<string, Terminator['precedence']>> = {
  Default: 'default',
  Required: 'required',
  Failed: 'failed',
};

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

function refuse(code: number, message: string): never {
  throw new EdgeRefusal(code, RetryHint.notRetriable, message);
}

function checkedCost(cost: number): number {
  if (cost > MAX_COST) refuse(EdgeErrorCode.invalidCost, `invalid cost ${cost}: at most ${MAX_COST}`);
  return cost;
}

function checkedPrecedence(precedence: string | number): Terminator['precedence'] {
  const known = typeof precedence === 'string' ? PRECEDENCE_OF[precedence] : undefined;
  return known ?? refuse(EdgeErrorCode.invalidPrecedence, `invalid precedence ${String(precedence)}`);
}

/** The request's peer data as the terminator keeps it (base64 by header id), refused past its bounds. */
function checkedPeerData(peerData: Readonly<Record<string, Buffer>>): Record<string, string> {
  const entries = Object.entries(peerData);
  const bytes = entries.reduce((sum, [, value]) => sum + value.length, 0);
  if (entries.length > MAX_PEER_DATA_ENTRIES || bytes > MAX_PEER_DATA_BYTES) {
    refuse(EdgeErrorCode.invalidTerminator, `peer data too large: at most ${MAX_PEER_DATA_BYTES} bytes are kept`);
  }
  return Object.fromEntries(entries.map(([key, value]) => [key, value.toString('base64')]));
}

/** The request's own fields, checked before the session (as the reference checks the address first). */
function checkedAddress(address: string): string {
  if (address === '') refuse(EdgeErrorCode.invalidTerminator, 'the terminator address is blank');
  if (address.length > MAX_ADDRESS_LENGTH) {
    refuse(EdgeErrorCode.invalidTerminator, `the terminator address is longer than ${MAX_ADDRESS_LENGTH} characters`);
  }
  return address;
}

/** A failure as the router reads it: a refusal's code and hint; a lost race, busy; anything else, internal. */
function refusalOf(error: unknown): EdgeRefusal {
  if (error instanceof EdgeRefusal) return error;
  if (error instanceof ConcurrentModificationError) {
    return new EdgeRefusal(EdgeErrorCode.internal, RetryHint.tooBusy, 'the controller is busy: try again');
  }
  return new EdgeRefusal(EdgeErrorCode.internal, RetryHint.retryDefault, 'internal error');
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
 * (`#shared/store/usable-terminators.ts`). A terminator the router does not re-send within a grace period after it
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
      const cost = checkedCost(request.cost);
      const precedence = checkedPrecedence(request.precedence);
      const peerData = checkedPeerData(request.peerData);
      if (request.instanceId.length > MAX_INSTANCE_ID_LENGTH) {
        refuse(EdgeErrorCode.invalidInstanceId, `the instance id is longer than ${MAX_INSTANCE_ID_LENGTH} characters`);
      }
      if (request.instanceSecret.length > MAX_INSTANCE_SECRET_BYTES) {
        refuse(
          EdgeErrorCode.invalidTerminator,
          `the instance secret is longer than ${MAX_INSTANCE_SECRET_BYTES} bytes`,
        );
      }
      // A reconnecting router re-sends every terminator it hosts: an id of another's is taken, never retried.
      const resent = async (stored: Stored<Terminator>) => {
        if (!isOwnTerminator(stored.doc, routerId, checked))
          refuse(EdgeErrorCode.internal, 'the terminator id is taken');
        const current = { cost, precedence, connectionId: connected.connectionId };
        const doc = stored.doc;
        if (doc.cost === cost && doc.precedence === precedence && doc.connectionId === connected.connectionId) return;
        await deps.store.transact(
          deps.store.replaceOps(terminators, stored, { ...doc, ...current, updatedAt: deps.now().toISOString() }),
        );
      };
      await withOptimisticRetry(async () => {
        const existing = await deps.store.get(terminators, address);
        if (existing) return resent(existing);
        const now = deps.now().toISOString();
        const doc: Terminator = {
          id: address,
          createdAt: now,
          updatedAt: now,
          tags: {},
          service: checked.service.id,
          router: routerId,
          edgeRouterId: routerId,
          transitRouterId: null,
          binding: EDGE_BINDING,
          address,
          // The reference shows the SDK's instance id as the terminator's `identity` (its addressable name).
          identity: request.instanceId,
          identitySecret: request.instanceSecret.length > 0 ? request.instanceSecret.toString('base64') : null,
          cost,
          precedence,
          hostId: checked.identity.id,
          peerData,
          connectionId: connected.connectionId,
        };
        try {
          // The kit's create: the service and the router must still exist, checked in the writing transaction.
          await deps.store.transact(deps.store.createOps(terminators, doc));
        } catch (error) {
          // The same id created meanwhile (the router sent its create twice): judged as a re-sent one.
          const raced = await deps.store.get(terminators, address);
          if (!raced) throw error;
          return resent(raced);
        }
        connected.channel.log.info('terminator created', { terminatorId: address, serviceId: doc.service });
      });
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
        response = { terminatorId: request.address, result: 'Success' };
      } catch (error) {
        const refusal = refusalOf(error);
        logRefusal(connected, message, 'terminator refused', request.address, refusal, error);
        response = {
          terminatorId: request.address,
          result: refusal.retryHint === RetryHint.tooBusy ? 'FailedBusy' : 'FailedOther',
          msg: refusal.message,
          errorCode: refusal.code,
          retryHint: refusal.retryHint,
        };
      }
      if (creating.get(request.address) === settled) creating.delete(request.address);
      channel.reply(message, {
        contentType: ContentType.createTerminatorV2Response,
        body: encodeBody('edge.CreateTerminatorV2Response', response),
      });
    }

    async function updateTerminator(connected: ConnectedRouter, request: UpdateTerminatorRequest): Promise<void> {
      const checked = await checkEdgeSession(deps, connected.router.id, request, 'Bind');
      const cost = request.updateCost ? checkedCost(request.cost) : undefined;
      const precedence = request.updatePrecedence ? checkedPrecedence(request.precedence) : undefined;
      await withOptimisticRetry(async () => {
        const stored = await deps.store.get(terminators, request.terminatorId);
        if (!stored || !isOwnTerminator(stored.doc, connected.router.id, checked)) {
          return refuse(EdgeErrorCode.invalidTerminator, 'invalid terminator: not found');
        }
        const changed = {
          ...stored.doc,
          cost: cost ?? stored.doc.cost,
          precedence: precedence ?? stored.doc.precedence,
          updatedAt: deps.now().toISOString(),
        };
        await deps.store.transact(deps.store.replaceOps(terminators, stored, changed));
      });
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
          return ours.map(({ doc }) => doc.id);
        });
        if (removed.length > 0) channel.log.info('terminators removed', { terminatorIds: removed });
        channel.reply(message, resultMessage(true));
      } catch (error) {
        channel.log.failure(message, 'terminators not removed', error);
        channel.reply(message, resultMessage(false, 'the terminators could not be removed: try again'));
      }
    }

    /** Deletes the router's edge terminators this connection neither created nor had re-sent: nobody hosts them. */
    async function sweepUnconfirmed(connected: ConnectedRouter): Promise<void> {
      const routerId = connected.router.id;
      if (context.connected(routerId) !== connected || connected.channel.closeReason !== undefined) return;
      const ids = await referrerIds(deps.store, { collection: 'edge-routers', id: routerId }, 'terminators');
      const stale = (await deps.store.getManyStored(terminators, ids)).filter(
        ({ doc }) =>
          doc.router === routerId && doc.binding === EDGE_BINDING && doc.connectionId !== connected.connectionId,
      );
      for (const { doc, version } of stale) {
        try {
          // Version-checked: one re-sent meanwhile is kept.
          await deps.store.transact(deps.store.deleteOps(terminators, doc, version));
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

    /**
     * A refusal on the request's merits (its session, its fields, a lost race) is the router's news; a malformed
     * request is the router's fault, counted by the channel; anything else is the controller's own failure.
     */
    function logRefusal(
      connected: ConnectedRouter,
      message: ChannelMessage,
      event: string,
      terminatorId: string,
      refusal: EdgeRefusal,
      cause: unknown,
    ): void {
      const { log } = connected.channel;
      if (cause === refusal || cause instanceof ConcurrentModificationError) {
        log.info(event, { terminatorId, code: refusal.code, detail: (cause as Error).message });
      } else {
        log.failure(message, event, cause, { terminatorId, code: refusal.code });
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
