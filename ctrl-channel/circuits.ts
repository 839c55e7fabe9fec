import { randomUUID } from 'node:crypto';
import { peerDataOf, type Terminator, terminators } from '#shared/entities/terminator.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { type CircuitRecord, putCircuit } from '#shared/store/circuit-items.ts';
import { deleteEntity } from '#shared/store/delete-entity.ts';
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
  routeMessages,
  routeResultOf,
  unrouteMessage,
} from './circuit-messages.ts';
import { choosePath } from './circuit-paths.ts';
import type { ConnectedRouter, ControlContext, ControlFeatureFactory } from './control-plane.ts';
import { type CheckedSession, checkEdgeSession, EdgeErrorCode, EdgeRefusal, RetryHint } from './edge-session-check.ts';
import { endCircuitsOnLostLinks } from './link-circuits.ts';
import { type ChannelMessage, ContentType, EdgeHeader, MalformedHeader, type OutgoingMessage } from './message.ts';
import type { RouterPath } from './router-paths.ts';

/** The reference's `routeTimeout`: how long a router has to set a route up (to dial the hosting SDK), per attempt. */
const ROUTE_TIMEOUT_MS = 10_000;
/** The reference's `createCircuitRetries`: the attempts at routing a circuit before the dial is refused. */
const ROUTE_ATTEMPTS = 2;

/** A circuit routed by this endpoint: what its answer and its stored item are made of. */
interface Routed {
  readonly terminator: Terminator;
  readonly ingressId: string;
  readonly peerData: ReadonlyMap<number, Buffer>;
  /** The routers it runs through, ingress first, and the links between them. */
  readonly path: RouterPath;
}

/**
 * Circuits (an SDK dials a service through a router): a router's CreateCircuitV2Request (20218) is checked as the
 * reference's edge control handler checks it (the Dial session, its API session, the service, this router for the
 * identity), a terminator of the service and the path to its router are chosen (`circuit-paths.ts`: on the asking
 * router, or across the links between routers), every router of the path is sent its Route (1005) and their
 * RouteResults (1022) awaited — twice at most, as the reference retries — and the router answered with the circuit
 * (20219) or an Error (20002) carrying the SDK's error code. Each made circuit is stored (`circuit-items.ts`, its path
 * and links) until a router's fault or the loss of a link it crosses ends it (`circuit-ends.ts`, `link-circuits.ts`). Routes reach the routers
 * connected to this endpoint only: a path through a router held by another endpoint is refused.
 */
export const circuits: ControlFeatureFactory = (context) => {
  // The circuits whose route this endpoint awaits, each with the routers it was sent to. Each router's result comes
  // back as the reply to its Route, on its own channel; any other RouteResult (one after its wait ended, or from a
  // router the route was not sent to) answers nothing and is unrouted on its sender, as the reference unroutes a
  // result it does not await. So another router can neither decide a route nor learn that one is awaited.
  const routing = new Map<string, ReadonlySet<string>>();
  const ends = circuitEnds(context);
  endCircuitsOnLostLinks(context);
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
  // Allocated once the session is checked (the refusal then names it); the routers a Route went to (a refusal then
  // unroutes it on each: a router may have set up what this endpoint stopped waiting for).
  let allocated = false;
  const routedOn = new Set<string>();
  try {
    const asked = circuitRequestOf(request);
    const checked = await checkEdgeSession(deps, routerId, asked, 'Dial', context.dialCache);
    if (checked.service.encryptionRequired && !asked.peerData.has(EdgeHeader.publicKey)) {
      throw new EdgeRefusal(
        EdgeErrorCode.encryptionDataMissing,
        RetryHint.notRetriable,
        'encryption required on service, initiator did not send public header',
      );
    }
    routing.set(circuitId, routedOn);
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
      routedOn,
    });
    const peerData = new Map([...peerDataOf(made.terminator), ...made.peerData]);
    if (checked.service.encryptionRequired && !peerData.has(EdgeHeader.publicKey)) {
      throw new EdgeRefusal(
        EdgeErrorCode.encryptionDataMissing,
        RetryHint.notRetriable,
        'encryption required on service, terminator did not send public header',
      );
    }
    router.channel.reply(
      request,
      circuitResponse({ circuitId, ingressId: made.ingressId, peerData, tags: tags(made.terminator) }),
    );
    storeAnswered(context, router, circuitRecord(context, circuitId, checked, made), new Set(routedOn));
  } catch (error) {
    unrouteEverywhere(context, circuitId, routedOn);
    context.terminatorChoice.circuitRemoved(circuitId);
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
 * Stores a circuit already answered (`circuit-writes.ts`); should the write fail, the circuit is ended on every
 * router it was routed on, as a refusal would have (the table must hold what its faults are to end).
 */
export function storeAnswered(
  context: ControlContext,
  router: ConnectedRouter,
  circuit: CircuitRecord,
  routedOn: ReadonlySet<string>,
): void {
  context.circuitWrites.record(
    circuit.id,
    () => putCircuit(context.deps.store, circuit, context.deps.now()),
    (error) => {
      unrouteEverywhere(context, circuit.id, routedOn);
      context.terminatorChoice.circuitRemoved(circuit.id);
      context.deps.logger.error('ctrl channel ended a circuit it could not store', {
        circuitId: circuit.id,
        routerId: router.router.id,
        error: error instanceof Error ? error.message : String(error),
      });
    },
  );
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
  circuitId: string,
  checked: CheckedSession,
  made: Routed,
): CircuitRecord {
  return {
    id: circuitId,
    sessionId: checked.session.id,
    serviceId: checked.service.id,
    path: made.path.nodes,
    ...(made.path.links.length > 0 ? { links: made.path.links } : {}),
    terminatorId: made.terminator.id,
    clientId: checked.identity.id,
    hostId: hostIdOf(made.terminator),
    endpointId: context.endpointId,
    createdAt: context.deps.now().toISOString(),
  };
}

/** Why a path cannot be routed from here yet: one of its routers is connected to another endpoint process. */
export class PathNotHeld extends CircuitFailure {
  constructor(circuitId: string, routerId: string) {
    super(
      `cannot route circuit [c/${circuitId}]: router ${routerId} on its path is connected to another controller endpoint, which this one has no relay to (none configured here, or that endpoint is not running)`,
    );
    this.name = 'PathNotHeld';
  }
}

/**
 * Routes a circuit from the asking router: each attempt chooses a terminator and the path to it (`circuit-paths.ts`;
 * a terminator the last attempt found gone from its router was deleted meanwhile, and a failed attempt drops what the
 * endpoint kept of the service's terminators), sends every router of the path its
 * Route at once, with fresh ingress and egress addresses, and waits for all their results; a failure on any router
 * fails the attempt. Every router a Route went to is added to `routedOn` as it is sent, so that the caller unroutes
 * them all when the circuit is not made after all; after a success, the routers of earlier attempts off the final
 * path are unrouted here. An SDK's dial and a tunneling router's own (`tunnel-circuits.ts`) are routed alike.
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
    readonly routedOn: Set<string>;
  },
): Promise<Routed> {
  const { deps, timings } = context;
  const timeoutMs = timings.routeTimeoutMs ?? ROUTE_TIMEOUT_MS;
  let lastError = '';
  for (let attempt = 0; attempt < ROUTE_ATTEMPTS; attempt++) {
    const { terminator, path, chosen } = await choosePath(context, router.router.id, circuit, router.channel.log);
    // Routes reach the routers connected here, and those of other endpoints through their relay; a router neither
    // reaches fails the path at once, before any router is sent anything.
    for (const routerId of path.nodes) {
      if (!context.directory.reaches(routerId)) throw new PathNotHeld(circuit.circuitId, routerId);
    }
    const addresses = { circuitId: circuit.circuitId, attempt, ingressId: randomUUID(), egressId: randomUUID() };
    const messages = routeMessages({
      ...addresses,
      links: path.links,
      binding: terminator.binding,
      destination: terminator.address,
      peerData: circuit.asked,
      timeoutMs,
      tags: circuit.tags(terminator),
    });
    for (const routerId of path.nodes) circuit.routedOn.add(routerId);
    const results = await Promise.all(
      path.nodes.map((routerId, index) => awaitRoute(context, routerId, timeoutMs, addresses, messages[index]!)),
    );
    const egress = results[results.length - 1]!;
    const failure = egress.success ? results.find((result) => !result.success) : egress;
    if (!failure && egress.success) {
      unrouteOffPath(context, circuit.circuitId, circuit.routedOn, path.nodes);
      context.terminatorChoice.dialSucceeded(chosen, circuit.circuitId);
      // What the strategy tells the dialer (the sticky token) comes last, as the reference adds it.
      const peerData = new Map([...egress.peerData, ...chosen.peerData]);
      return { terminator, ingressId: addresses.ingressId, peerData, path };
    }
    context.terminatorChoice.dialFailed(chosen);
    if (failure && !failure.success) lastError = failure.error;
    // A terminator its router hosts (an SDK's or its tunnel's) and no longer finds: the reference deletes it.
    if (!egress.success && egress.errorCode === INVALID_TERMINATOR && HOSTED_BINDINGS.has(terminator.binding)) {
      await deleteInvalidTerminator(deps, router, terminator.id);
    }
    // The next attempt chooses among the service's terminators read afresh (after the delete above), not those kept in
    // memory: the one that failed may be gone before its delete's notice comes.
    context.terminatorCache.forget(circuit.serviceId);
  }
  throw new CircuitFailure(
    `exceeded maximum [${ROUTE_ATTEMPTS}] retries creating circuit [c/${circuit.circuitId}] (${lastError})`,
  );
}

/** Unroutes at once, on each router connected here, a circuit routed on them and then not made. */
export function unrouteEverywhere(context: ControlContext, circuitId: string, routerIds: Iterable<string>): void {
  for (const routerId of routerIds) context.directory.send(routerId, unrouteMessage(circuitId, true));
}

/** The routers an earlier attempt routed that the made circuit does not run through: unrouted, as the reference does. */
function unrouteOffPath(
  context: ControlContext,
  circuitId: string,
  routedOn: ReadonlySet<string>,
  nodes: readonly string[],
): void {
  unrouteEverywhere(
    context,
    circuitId,
    [...routedOn].filter((routerId) => !nodes.includes(routerId)),
  );
}

/**
 * Sends a Route and reads its result; no result in time is a failure, as the reference's route timeout, and so is a
 * channel that closes meanwhile.
 */
async function awaitRoute(
  context: ControlContext,
  routerId: string,
  timeoutMs: number,
  addresses: RouteAddresses,
  message: OutgoingMessage,
): Promise<RouteResult> {
  try {
    return routeResultOf(await context.directory.request(routerId, message, timeoutMs), addresses);
  } catch (error) {
    const error_ =
      error instanceof ReplyTimeoutError
        ? `timeout creating routes for [s/${addresses.circuitId}]`
        : `router ${routerId} did not answer the route: ${(error as Error).message}`;
    return { success: false, error: error_, errorCode: undefined };
  }
}

/** The bindings of the terminators a router hosts and creates itself: an SDK's Bind (`edge`), its own tunnel's. */
const HOSTED_BINDINGS: ReadonlySet<string> = new Set(['edge', 'tunnel']);

/** The hosting identity a circuit names (the route's `hostId` tag); empty for a terminator made over the management API. */
export const hostIdOf = (terminator: Terminator) => terminator.hostId ?? '';

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
