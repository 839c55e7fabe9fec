import { type Terminator, terminators } from '#shared/entities/terminator.ts';
import type { ConnectedRouter, ControlContext } from './control-plane.ts';
import {
  type ChannelMessage,
  ContentType,
  EdgeHeader,
  isHeaderTrue,
  TunnelHealthHeader,
  uint32Header,
} from './message.ts';
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
import { checkTunnelAccess } from './tunnel-access.ts';

/** The binding of the terminators a tunneling router hosts itself (the reference's `common.TunnelBinding`). */
export const TUNNEL_BINDING = 'tunnel';

interface CreateTunnelTerminatorRequestV2 {
  readonly serviceId: string;
  readonly address: string;
  readonly peerData: Readonly<Record<string, Buffer>>;
  readonly cost: number;
  readonly precedence: string | number;
  readonly instanceId: string;
  readonly instanceSecret: Buffer;
  /** The router's clock when it sent the create (ms): handed back on success, for its own timing. */
  readonly startTime: number;
}

interface UpdateTunnelTerminatorRequest {
  readonly terminatorId: string;
  readonly cost: number;
  readonly precedence: string | number;
  readonly updatePrecedence: boolean;
  readonly updateCost: boolean;
}

/**
 * Whether a stored terminator is one this tunneling router hosts itself: a `tunnel` one on this router, hosted by its
 * own identity (whose id is the router's), of the service when one is named. Any other is refused in the same words
 * as an unknown id, as an SDK's are (`terminator-requests.ts`).
 */
function isOwnTunnelTerminator(terminator: Terminator, routerId: string, serviceId?: string): boolean {
  return (
    terminator.binding === TUNNEL_BINDING &&
    terminator.router === routerId &&
    terminator.hostId === routerId &&
    (serviceId === undefined || terminator.service === serviceId)
  );
}

/**
 * A tunneling router's terminators: the services its data model says its own identity may Bind, with a host config
 * (`policy-data-state.ts`), it hosts itself. It asks for each terminator with CreateTunnelTerminatorRequestV2 (20413,
 * sent without waiting; answered by 20414, matched by terminator id), changes its cost or precedence as its health
 * checks say (20408 → an empty 20409, or 20002), reports those checks (20412, not answered) and removes what it no
 * longer hosts with the RemoveTerminatorsRequest an SDK's unbind uses (1038, `terminators.ts`, which deletes only this
 * router's). Checked as the reference checks them (`tunnel-access.ts`) and stored as an SDK's Bind is, with binding
 * `tunnel` and the router's identity as host; re-sent after a reconnect, and swept with the SDKs' when not.
 */
export function bindTunnelTerminators(context: ControlContext, connected: ConnectedRouter): void {
  const { deps } = context;
  const { channel } = connected;
  const routerId = connected.router.id;

  async function create(request: CreateTunnelTerminatorRequestV2): Promise<void> {
    const address = checkedAddress(request.address);
    const { identity, service } = await checkTunnelAccess(deps, routerId, { id: request.serviceId }, 'Bind');
    const doc = hostedTerminator(connected, deps.now(), {
      address,
      service: service.id,
      binding: TUNNEL_BINDING,
      hostId: identity.id,
      ...checkedHostedFields(request),
    });
    await createOrTakeResent(deps, connected, doc, (stored) => isOwnTunnelTerminator(stored, routerId, service.id));
    // This endpoint's next dial sees it at once; the write's notice tells every endpoint within seconds.
    context.terminatorCache.forget(doc.service);
  }

  async function answerCreate(message: ChannelMessage): Promise<void> {
    // A body that does not decode names no terminator to answer for: dropped (the channel logs and counts it), as the
    // reference drops it; the router asks again within two minutes.
    const request = decodeBody<CreateTunnelTerminatorRequestV2>('edge.CreateTunnelTerminatorRequestV2', message.body);
    let response: object;
    try {
      await create(request);
      response = { ...createAnswer(request.address), startTime: request.startTime };
    } catch (error) {
      const refusal = refusalOf(error);
      logRefusal(connected, message, 'tunnel terminator refused', request.address, refusal, error);
      response = createAnswer(request.address, refusal);
    }
    channel.reply(message, {
      contentType: ContentType.createTunnelTerminatorResponseV2,
      body: encodeBody('edge.CreateTunnelTerminatorResponseV2', response),
    });
  }

  async function answerUpdate(message: ChannelMessage): Promise<void> {
    let terminatorId = '';
    try {
      const request = decodeBody<UpdateTunnelTerminatorRequest>('edge.UpdateTunnelTerminatorRequest', message.body);
      terminatorId = request.terminatorId;
      const updated = await updateOwnTerminator(
        deps,
        terminatorId,
        (stored) => isOwnTunnelTerminator(stored, routerId),
        {
          ...(request.updateCost ? { cost: checkedCost(request.cost) } : {}),
          ...(request.updatePrecedence ? { precedence: checkedPrecedence(request.precedence) } : {}),
        },
      );
      context.terminatorCache.forget(updated.service);
      channel.reply(message, { contentType: ContentType.updateTunnelTerminatorResponse });
    } catch (error) {
      const refusal = refusalOf(error);
      logRefusal(connected, message, 'tunnel terminator update refused', terminatorId, refusal, error);
      channel.reply(message, {
        contentType: ContentType.error,
        headers: new Map([[EdgeHeader.errorCode, uint32Header(refusal.code)]]),
        body: Buffer.from(refusal.message),
      });
    }
  }

  /**
   * A health check's outcome, of a terminator this router hosts itself: logged (the reference counts them in its
   * metrics, which this controller does not keep). What the check changes, the router asks for with an update.
   */
  async function health(message: ChannelMessage): Promise<void> {
    const terminatorId = message.headers.get(TunnelHealthHeader.terminatorId)?.toString() ?? '';
    const passed = isHeaderTrue(message, TunnelHealthHeader.checkPassed);
    const stored = terminatorId ? await deps.store.get(terminators, terminatorId) : undefined;
    if (!stored || !isOwnTunnelTerminator(stored.doc, routerId)) return;
    channel.log.info('tunnel health check', { terminatorId, serviceId: stored.doc.service, passed });
  }

  channel.handle(ContentType.createTunnelTerminatorRequestV2, answerCreate);
  channel.handle(ContentType.updateTunnelTerminatorRequest, answerUpdate);
  channel.handle(ContentType.tunnelHealthEvent, health);
}
