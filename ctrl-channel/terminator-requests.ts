import { MAX_PEER_DATA_BYTES, type Terminator, terminators } from '#shared/entities/terminator.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { ConcurrentModificationError, type Stored } from '#shared/store/entity-store.ts';
import { withOptimisticRetry } from '#shared/store/optimistic-retry.ts';
import type { ConnectedRouter } from './control-plane.ts';
import { EdgeErrorCode, EdgeRefusal, RetryHint } from './edge-session-check.ts';
import type { ChannelMessage } from './message.ts';

/**
 * What a router's requests about the terminators it hosts have in common, whoever hosts behind it (an SDK's Bind,
 * `terminators.ts`; its own tunnel, `tunnel-terminators.ts`): the bounds of the request's fields, the refusals the
 * router acts on, and the writes of a create (or a create re-sent) and of an update.
 */

/** A terminator's cost is a u16 in the reference. */
const MAX_COST = 65_535;
/** The router makes the address (a UUID) and it becomes the terminator's id: bounded as an id is. */
const MAX_ADDRESS_LENGTH = 255;
/** Bounds on what a create brings beside the address, so a terminator always fits its item. */
const MAX_INSTANCE_ID_LENGTH = 255;
const MAX_INSTANCE_SECRET_BYTES = 3072;
const MAX_PEER_DATA_ENTRIES = 16;

const PRECEDENCE_OF: Readonly<Record<string, Terminator['precedence']>> = {
  Default: 'default',
  Required: 'required',
  Failed: 'failed',
};

export function refuse(code: number, message: string): never {
  throw new EdgeRefusal(code, RetryHint.notRetriable, message);
}

export function checkedCost(cost: number): number {
  if (cost > MAX_COST) refuse(EdgeErrorCode.invalidCost, `invalid cost ${cost}: at most ${MAX_COST}`);
  return cost;
}

/** The enum's name, or its number when the router sent one the schema does not know (refused). */
export function checkedPrecedence(precedence: string | number): Terminator['precedence'] {
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

/** The request's own id, checked before anything else (as the reference checks the address first). */
export function checkedAddress(address: string): string {
  if (address === '') refuse(EdgeErrorCode.invalidTerminator, 'the terminator address is blank');
  if (address.length > MAX_ADDRESS_LENGTH) {
    refuse(EdgeErrorCode.invalidTerminator, `the terminator address is longer than ${MAX_ADDRESS_LENGTH} characters`);
  }
  return address;
}

/** The hosting instance's id and secret (the terminator's `identity` and `identitySecret`), refused past their bounds. */
function checkedInstance(instanceId: string, instanceSecret: Buffer): Pick<Terminator, 'identity' | 'identitySecret'> {
  if (instanceId.length > MAX_INSTANCE_ID_LENGTH) {
    refuse(EdgeErrorCode.invalidInstanceId, `the instance id is longer than ${MAX_INSTANCE_ID_LENGTH} characters`);
  }
  if (instanceSecret.length > MAX_INSTANCE_SECRET_BYTES) {
    refuse(EdgeErrorCode.invalidTerminator, `the instance secret is longer than ${MAX_INSTANCE_SECRET_BYTES} bytes`);
  }
  // The reference shows the hosting instance's id as the terminator's `identity` (its addressable name).
  return {
    identity: instanceId,
    identitySecret: instanceSecret.length > 0 ? instanceSecret.toString('base64') : null,
  };
}

/** The fields of a router's create beside its address and service, checked in the reference's order. */
export function checkedHostedFields(request: {
  readonly cost: number;
  readonly precedence: string | number;
  readonly peerData: Readonly<Record<string, Buffer>>;
  readonly instanceId: string;
  readonly instanceSecret: Buffer;
}): Pick<Terminator, 'cost' | 'precedence' | 'peerData' | 'identity' | 'identitySecret'> {
  return {
    cost: checkedCost(request.cost),
    precedence: checkedPrecedence(request.precedence),
    peerData: checkedPeerData(request.peerData),
    ...checkedInstance(request.instanceId, request.instanceSecret),
  };
}

/**
 * A terminator a router hosts (for an SDK's Bind, or its own tunnel) as it is stored: its id is the address the router
 * made, on this router, last created or re-sent by this connection.
 */
export function hostedTerminator(
  connected: ConnectedRouter,
  now: Date,
  fields: Pick<Terminator, 'address' | 'service' | 'binding' | 'hostId'> & ReturnType<typeof checkedHostedFields>,
): Terminator {
  const at = now.toISOString();
  const routerId = connected.router.id;
  return {
    id: fields.address,
    createdAt: at,
    updatedAt: at,
    tags: {},
    router: routerId,
    edgeRouterId: routerId,
    transitRouterId: null,
    ...fields,
    connectionId: connected.connectionId,
  };
}

/** A failure as the router reads it: a refusal's code and hint; a lost race, busy; anything else, internal. */
export function refusalOf(error: unknown): EdgeRefusal {
  if (error instanceof EdgeRefusal) return error;
  if (error instanceof ConcurrentModificationError) {
    return new EdgeRefusal(EdgeErrorCode.internal, RetryHint.tooBusy, 'the controller is busy: try again');
  }
  return new EdgeRefusal(EdgeErrorCode.internal, RetryHint.retryDefault, 'internal error');
}

/**
 * The answer of a create (CreateTerminatorV2Response, CreateTunnelTerminatorResponseV2 less its start time): success,
 * or the refusal's text, code and hint, `FailedBusy` when the router is to try again later.
 */
export function createAnswer(terminatorId: string, refusal?: EdgeRefusal) {
  if (!refusal) return { terminatorId, result: 'Success' };
  return {
    terminatorId,
    result: refusal.retryHint === RetryHint.tooBusy ? 'FailedBusy' : 'FailedOther',
    msg: refusal.message,
    errorCode: refusal.code,
    retryHint: refusal.retryHint,
  };
}

/**
 * Stores a terminator a router asks for, or takes one it re-sends (a reconnecting router re-sends every terminator it
 * hosts): the same id that `isOwn` says is this router's for the same host has its cost, precedence and connection
 * updated; any other holder's is refused in the same words whoever holds it, so a router, whose certificate may be an
 * attacker's, learns nothing of terminators that are not its own.
 */
export async function createOrTakeResent(
  deps: Deps,
  connected: ConnectedRouter,
  doc: Terminator,
  isOwn: (stored: Terminator) => boolean,
): Promise<void> {
  const resent = async (stored: Stored<Terminator>) => {
    if (!isOwn(stored.doc)) refuse(EdgeErrorCode.internal, 'the terminator id is taken');
    const current = { cost: doc.cost, precedence: doc.precedence, connectionId: connected.connectionId };
    const before = stored.doc;
    if (
      before.cost === doc.cost &&
      before.precedence === doc.precedence &&
      before.connectionId === current.connectionId
    )
      return;
    await deps.store.transact(
      deps.store.replaceOps(terminators, stored, { ...before, ...current, updatedAt: deps.now().toISOString() }),
    );
  };
  await withOptimisticRetry(async () => {
    const existing = await deps.store.get(terminators, doc.id);
    if (existing) return resent(existing);
    try {
      // The kit's create: the service and the router must still exist, checked in the writing transaction.
      await deps.store.transact(deps.store.createOps(terminators, doc));
    } catch (error) {
      // The same id created meanwhile (the router sent its create twice): judged as a re-sent one.
      const raced = await deps.store.get(terminators, doc.id);
      if (!raced) throw error;
      return resent(raced);
    }
    connected.channel.log.info('terminator created', {
      terminatorId: doc.id,
      serviceId: doc.service,
      binding: doc.binding,
    });
  });
}

/**
 * Changes the cost or precedence (each when given) of a terminator `isOwn` says the router may change, and returns it
 * changed; any other, or one not stored, is refused as an unknown id is.
 */
export async function updateOwnTerminator(
  deps: Deps,
  terminatorId: string,
  isOwn: (stored: Terminator) => boolean,
  change: { readonly cost?: number; readonly precedence?: Terminator['precedence'] },
): Promise<Terminator> {
  return withOptimisticRetry(async () => {
    const stored = await deps.store.get(terminators, terminatorId);
    if (!stored || !isOwn(stored.doc)) return refuse(EdgeErrorCode.invalidTerminator, 'invalid terminator: not found');
    const changed = {
      ...stored.doc,
      cost: change.cost ?? stored.doc.cost,
      precedence: change.precedence ?? stored.doc.precedence,
      updatedAt: deps.now().toISOString(),
    };
    await deps.store.transact(deps.store.replaceOps(terminators, stored, changed));
    return changed;
  });
}

/**
 * A refusal on the request's merits (its session, its fields, a lost race) is the router's news; a malformed
 * request is the router's fault, counted by the channel; anything else is the controller's own failure.
 */
export function logRefusal(
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
