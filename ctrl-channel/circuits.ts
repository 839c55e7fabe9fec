import { randomUUID } from 'node:crypto';
import { peerDataOf, type Terminator, terminators } from '#shared/entities/terminator.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { type CircuitRecord, putCircuit } from '#shared/store/circuit-items.ts';
import { deleteEntity } from '#shared/store/delete-entity.ts';
import { usableTerminators } from '#shared/store/usable-terminators.ts';
import { ReplyTimeoutError } from './channel.ts';
import { circuitEnds } from './circuit-ends.ts';
import {
  CircuitFailure,
  circuitError,
  circuitRequestOf,
  circuitResponse,
  INVALID_TERMINATOR,
  type RouteAddresses,
  type RouteResult,
  routeMessage,
  routeResultOf,
  unrouteMessage,
} from './circuit-messages.ts';
import type { ConnectedRouter, ControlContext, ControlFeatureFactory } from './control-plane.ts';
import { type CheckedSession, checkEdgeSession, EdgeErrorCode, EdgeRefusal, RetryHint } from './edge-session-check.ts';
import { type ChannelMessage, ContentType, EdgeHeader, MalformedHeader, type OutgoingMessage } from './message.ts';
import type { Chosen } from './terminator-choice.ts';

/** The reference's `routeTimeout`: how long a router has to set a route up (to dial the hosting SDK), per attempt. */
const ROUTE_TIMEOUT_MS = 10_000;
/** The reference's `createCircuitRetries`: the attempts at routing a circuit before the dial is refused. */
const ROUTE_ATTEMPTS = 2;

/** A circuit routed by this endpoint: what its answer and its stored item are made of. */
interface Routed {
  readonly terminator: Terminator;
  readonly ingressId: string;
  readonly peerData: ReadonlyMap<number, Buffer>;
}

/**
 * Circuits (an SDK dials a service through a router): a router's CreateCircuitV2Request (20218) is checked as the
 * reference's edge control handler checks it (the Dial session, its API session, the service, this router for the
 * identity), a terminator of the service on this router is chosen, the router is sent the Route (1005) and its
 * RouteResult (1022) awaited — twice at most, as the reference retries — and the router answered with the circuit
 * (20219) or an Error (20002) carrying the SDK's error code. Each made circuit is stored (`circuit-items.ts`) until a
 * router's fault ends it (`circuit-ends.ts`). Single-router circuits only: routers do not link to each other yet, so a
 * service reached through another router's terminators has no path.
 */
export const circuits: ControlFeatureFactory = (context) => {
  // The circuits whose route this endpoint awaits, each with the routers it was sent to (the one asking, while paths
  // are one router). Each router's result comes back as the reply to its Route, on its own channel; any other
  // RouteResult (one after its wait ended, or from a router the route was not sent to) answers nothing and is
  // unrouted on its sender, as the reference unroutes a result it does not await. So another router can neither
  // decide a route nor learn that one is awaited.
  const routing = new Map<string, ReadonlySet<string>>();
  const ends = circuitEnds(context);
  return {
    bind(router) {
      router.channel.handle(ContentType.createCircuitV2Request, (request) =>
        createCircuit(context, router, request, routing),
      );
      router.channel.handle(ContentType.routeResult, (result) => {
        const circuitId = result.body.toString();
        if (circuitId && !routing.get(circuitId)?.has(router.router.id)) {
          router.channel.send(unrouteMessage(circuitId, true));
        }
      });
      ends.bind(router);
    },
  };
};

async function createCircuit(
  context: ControlContext,
  router: ConnectedRouter,
  request: ChannelMessage,
  routing: Map<string, ReadonlySet<string>>,
): Promise<void> {
  const { deps } = context;
  const routerId = router.router.id;
  const circuitId = randomUUID();
  // Allocated once the session is checked (the refusal then names it), routed once a Route went out (a refusal then
  // unroutes it: the router may have set up what this endpoint stopped waiting for).
  let allocated = false;
  let routed = false;
  try {
    const asked = circuitRequestOf(request);
    const checked = await checkEdgeSession(deps, routerId, asked, 'Dial');
    if (checked.service.encryptionRequired && !asked.peerData.has(EdgeHeader.publicKey)) {
      throw new EdgeRefusal(
        EdgeErrorCode.encryptionDataMissing,
        RetryHint.notRetriable,
        'encryption required on service, initiator did not send public header',
      );
    }
    routing.set(circuitId, new Set([routerId]));
    allocated = true;
    context.terminatorChoice.serviceSettings.noted(checked.service);
    const tags = (terminator: Terminator) => ({
      serviceId: checked.service.id,
      clientId: checked.identity.id,
      hostId: hostIdOf(terminator),
    });
    const made = await route(context, router, {
      circuitId,
      asked: asked.peerData,
      instanceId: asked.terminatorInstanceId,
      serviceId: checked.service.id,
      terminatorStrategy: checked.service.terminatorStrategy,
      tags,
      sent: () => {
        routed = true;
      },
    });
    const peerData = new Map([...peerDataOf(made.terminator), ...made.peerData]);
    if (checked.service.encryptionRequired && !peerData.has(EdgeHeader.publicKey)) {
      throw new EdgeRefusal(
        EdgeErrorCode.encryptionDataMissing,
        RetryHint.notRetriable,
        'encryption required on service, terminator did not send public header',
      );
    }
    await putCircuit(deps.store, circuitRecord(context, routerId, circuitId, checked, made), deps.now());
    router.channel.reply(
      request,
      circuitResponse({ circuitId, ingressId: made.ingressId, peerData, tags: tags(made.terminator) }),
    );
  } catch (error) {
    if (routed) {
      router.channel.send(unrouteMessage(circuitId, true));
      context.terminatorChoice.circuitRemoved(circuitId);
    }
    const { message, code } = refusalOf(error);
    if (error instanceof EdgeRefusal || error instanceof CircuitFailure) {
      router.channel.log.warn('ctrl channel refused a circuit', { circuitId, reason: error.message });
    } else {
      router.channel.log.failure(request, 'ctrl channel refused a circuit', error, { circuitId });
    }
    router.channel.reply(request, circuitError(message, code, allocated ? circuitId : undefined));
  } finally {
    routing.delete(circuitId);
  }
}

/**
 * What a refusal tells the router (which tells its SDK): its text and the SDK's error code, Internal for what is no
 * session refusal. An unexpected failure (the table's) is logged, not passed on.
 */
export function refusalOf(error: unknown): { message: string; code: number } {
  if (error instanceof EdgeRefusal || error instanceof CircuitFailure)
    return { message: error.message, code: error.code };
  if (error instanceof MalformedHeader) return { message: error.message, code: EdgeErrorCode.internal };
  return { message: 'internal error creating the circuit', code: EdgeErrorCode.internal };
}

function circuitRecord(
  context: ControlContext,
  routerId: string,
  circuitId: string,
  checked: CheckedSession,
  made: Routed,
): CircuitRecord {
  return {
    id: circuitId,
    sessionId: checked.session.id,
    serviceId: checked.service.id,
    path: [routerId],
    terminatorId: made.terminator.id,
    clientId: checked.identity.id,
    hostId: hostIdOf(made.terminator),
    endpointId: context.endpointId,
    createdAt: context.deps.now().toISOString(),
  };
}

/**
 * Routes a circuit on the asking router: each attempt chooses a terminator (one the last attempt found gone from its
 * router was deleted meanwhile), sends the Route with fresh ingress and egress addresses and waits for its result.
 * An SDK's dial and a tunneling router's own (`tunnel-circuits.ts`) are routed alike.
 */
export async function route(
  context: ControlContext,
  router: ConnectedRouter,
  circuit: {
    readonly circuitId: string;
    readonly asked: ReadonlyMap<number, Buffer>;
    readonly instanceId: string;
    readonly serviceId: string;
    /** The service's, as the dial read it: the terminator is its choice (`terminator-choice.ts`). */
    readonly terminatorStrategy: string;
    readonly tags: (terminator: Terminator) => Record<string, string>;
    readonly sent: () => void;
  },
): Promise<Routed> {
  const { deps, timings } = context;
  const timeoutMs = timings.routeTimeoutMs ?? ROUTE_TIMEOUT_MS;
  let lastError = '';
  for (let attempt = 0; attempt < ROUTE_ATTEMPTS; attempt++) {
    const chosen = await terminatorOn(context, router, circuit);
    const { terminator } = chosen;
    const addresses = { circuitId: circuit.circuitId, attempt, ingressId: randomUUID(), egressId: randomUUID() };
    circuit.sent();
    const message = routeMessage({
      ...addresses,
      binding: terminator.binding,
      destination: terminator.address,
      peerData: circuit.asked,
      timeoutMs,
      tags: circuit.tags(terminator),
    });
    const result = await awaitRoute(router, timeoutMs, addresses, message);
    if (result.success) {
      context.terminatorChoice.dialSucceeded(chosen, circuit.circuitId);
      // What the strategy tells the dialer (the sticky token) comes last, as the reference adds it.
      const peerData = new Map([...result.peerData, ...chosen.peerData]);
      return { terminator, ingressId: addresses.ingressId, peerData };
    }
    context.terminatorChoice.dialFailed(chosen);
    lastError = result.error;
    // A terminator its router hosts (an SDK's or its tunnel's) and no longer finds: the reference deletes it.
    if (result.errorCode === INVALID_TERMINATOR && HOSTED_BINDINGS.has(terminator.binding)) {
      await deleteInvalidTerminator(deps, router, terminator.id);
    }
  }
  throw new CircuitFailure(
    `exceeded maximum [${ROUTE_ATTEMPTS}] retries creating circuit [c/${circuit.circuitId}] (${lastError})`,
  );
}

/** Sends a Route and reads its result; no result in time is a failure, as the reference's route timeout. */
async function awaitRoute(
  router: ConnectedRouter,
  timeoutMs: number,
  addresses: RouteAddresses,
  message: OutgoingMessage,
): Promise<RouteResult> {
  try {
    return routeResultOf(await router.channel.request(message, timeoutMs), addresses);
  } catch (error) {
    if (!(error instanceof ReplyTimeoutError)) throw error;
    return { success: false, error: `timeout creating routes for [s/${addresses.circuitId}]`, errorCode: undefined };
  }
}

/** The bindings of the terminators a router hosts and creates itself: an SDK's Bind (`edge`), its own tunnel's. */
const HOSTED_BINDINGS: ReadonlySet<string> = new Set(['edge', 'tunnel']);

/** The hosting identity a circuit names (the route's `hostId` tag); empty for a terminator made over the management API. */
export const hostIdOf = (terminator: Terminator) => terminator.hostId ?? '';

/**
 * The terminator a circuit from this router ends at: one of the service's on this router, online (`usableTerminators`),
 * of the SDK instance the dial asks for (the reference's terminator `identity` is the hosting SDK's instance id), as
 * the service's terminator strategy picks it (`terminator-choice.ts`).
 */
async function terminatorOn(
  context: ControlContext,
  router: ConnectedRouter,
  circuit: Pick<Parameters<typeof route>[2], 'serviceId' | 'terminatorStrategy' | 'instanceId' | 'asked'>,
): Promise<Chosen<Terminator>> {
  const { serviceId, instanceId } = circuit;
  const routerId = router.router.id;
  const online = await usableTerminators(context.deps, serviceId, { instanceId: instanceId || undefined });
  const here = online.filter((terminator) => terminator.router === routerId);
  if (here.length > 0) {
    const service = { id: serviceId, terminatorStrategy: circuit.terminatorStrategy };
    return context.terminatorChoice.choose(service, here, circuit.asked, router.channel.log);
  }
  const elsewhere = online.length > 0 && !instanceId;
  throw new CircuitFailure(
    elsewhere
      ? `no path to service ${serviceId} from router ${routerId}: its terminators are on other routers, which this controller does not link`
      : `service ${serviceId} has no terminators${instanceId ? ` for instance ${instanceId}` : ''} on router ${routerId}`,
  );
}

/** A terminator its router no longer hosts (the reference deletes an edge one): gone already is as good. */
async function deleteInvalidTerminator(deps: Deps, router: ConnectedRouter, terminatorId: string): Promise<void> {
  const stored = await deps.store.get(terminators, terminatorId);
  if (!stored) return;
  try {
    await deleteEntity(deps, terminators, stored);
  } catch (error) {
    router.channel.log.failed('could not delete an invalid terminator', {
      terminatorId,
      detail: (error as Error).message,
    });
  }
}
