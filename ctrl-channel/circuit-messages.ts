import { EdgeErrorCode } from './edge-session-check.ts';
import {
  type ChannelMessage,
  CircuitRequestHeader,
  CircuitResponseHeader,
  ContentType,
  EdgeHeader,
  isHeaderTrue,
  MalformedHeader,
  type OutgoingMessage,
  RouteResultHeader,
  stringMapHeader,
  stringSliceOf,
  uint32BytesMapHeader,
  uint32BytesMapOf,
  uint32Header,
  uint32Of,
} from './message.ts';
import { encodeBody } from './protobuf-codec.ts';

/** A router's CreateCircuitV2Request (20218): an SDK's Dial, all in headers. */
export interface CircuitRequest {
  readonly sessionToken: string;
  readonly apiSessionToken: string;
  readonly fingerprints: readonly string[];
  readonly terminatorInstanceId: string;
  /** The dialer's peer data (its public key, caller id, app data, identity), passed on to the terminating side. */
  readonly peerData: ReadonlyMap<number, Buffer>;
}

/** Reads a CreateCircuitV2Request; a {@link MalformedHeader} when a header is not what its id says, or no session token. */
export function circuitRequestOf(message: ChannelMessage): CircuitRequest {
  const text = (key: number) => message.headers.get(key)?.toString() ?? '';
  const sessionToken = text(CircuitRequestHeader.sessionToken);
  if (!sessionToken) throw new MalformedHeader(CircuitRequestHeader.sessionToken, 'no session token');
  return {
    sessionToken,
    apiSessionToken: text(CircuitRequestHeader.apiSessionToken),
    fingerprints: stringSliceOf(message, CircuitRequestHeader.fingerprints),
    terminatorInstanceId: text(CircuitRequestHeader.terminatorInstanceId),
    peerData: uint32BytesMapOf(message, CircuitRequestHeader.peerData),
  };
}

/** The answer to a created circuit (20219): its id, the ingress address, the peer data and tags, all in headers. */
export function circuitResponse(circuit: {
  readonly circuitId: string;
  readonly ingressId: string;
  readonly peerData: ReadonlyMap<number, Buffer>;
  readonly tags: Readonly<Record<string, string>>;
}): OutgoingMessage {
  return {
    contentType: ContentType.createCircuitV2Response,
    headers: new Map([
      [CircuitResponseHeader.circuitId, Buffer.from(circuit.circuitId)],
      [CircuitResponseHeader.address, Buffer.from(circuit.ingressId)],
      [CircuitResponseHeader.peerData, uint32BytesMapHeader(circuit.peerData)],
      [CircuitResponseHeader.tags, stringMapHeader(circuit.tags)],
    ]),
  };
}

/**
 * A refusal (20002 Error): the text as body, the SDK error code the router relays to its SDK, and the circuit's id
 * when one had been allocated.
 */
export function circuitError(message: string, code: number, circuitId?: string): OutgoingMessage {
  const headers = new Map<number, Buffer>([[EdgeHeader.errorCode, uint32Header(code)]]);
  if (circuitId) headers.set(EdgeHeader.circuitId, Buffer.from(circuitId));
  return { contentType: ContentType.error, headers, body: Buffer.from(message) };
}

/** Why a circuit could not be made past the session checks (no terminator, a route that failed): code Internal. */
export class CircuitFailure extends Error {
  readonly code = EdgeErrorCode.internal;
  constructor(message: string) {
    super(message);
    this.name = 'CircuitFailure';
  }
}

/** A route's per-attempt addresses: the dialer's ingress and the terminator's egress (fresh UUIDs each attempt). */
export interface RouteAddresses {
  readonly circuitId: string;
  readonly attempt: number;
  readonly ingressId: string;
  readonly egressId: string;
}

/** A Route's forward: payload arriving from `srcAddress` goes on to `dstAddress` (a link, or the circuit's end). */
interface Forward {
  readonly srcAddress: string;
  readonly dstAddress: string;
  readonly dstType: 'Start' | 'End' | 'Link';
}

/**
 * The forwards of each router of a path (B.3 of `docs/mesh-design.md`, the reference's `CreateRouteMessages`):
 * addresses are the attempt's two ids and the links' ids, which both ends of a link register it under. One router
 * joins ingress and egress; otherwise the ingress forwards to the first link, a transit router from link to link, the
 * egress from the last link to the terminator.
 */
export function forwardsOf(addresses: RouteAddresses, links: readonly string[]): Forward[][] {
  const { ingressId, egressId } = addresses;
  if (links.length === 0) {
    return [
      [
        { srcAddress: ingressId, dstAddress: egressId, dstType: 'End' },
        { srcAddress: egressId, dstAddress: ingressId, dstType: 'Start' },
      ],
    ];
  }
  const first = links[0]!;
  const last = links[links.length - 1]!;
  const transit = links.slice(1).map((next, index): Forward[] => {
    const before = links[index]!;
    return [
      { srcAddress: before, dstAddress: next, dstType: 'Link' },
      { srcAddress: next, dstAddress: before, dstType: 'Link' },
    ];
  });
  return [
    [
      { srcAddress: ingressId, dstAddress: first, dstType: 'Link' },
      { srcAddress: first, dstAddress: ingressId, dstType: 'Start' },
    ],
    ...transit,
    [
      { srcAddress: egressId, dstAddress: last, dstType: 'Link' },
      { srcAddress: last, dstAddress: egressId, dstType: 'End' },
    ],
  ];
}

/**
 * The Route (1005) of each router of a circuit's path, in path order, all of one circuit, attempt, timeout and tags;
 * the last (the terminator's router) alone carries the egress: the terminator to dial, with the dialer's peer data.
 */
export function routeMessages(
  route: RouteAddresses & {
    readonly links: readonly string[];
    readonly binding: string;
    readonly destination: string;
    readonly peerData: ReadonlyMap<number, Buffer>;
    readonly timeoutMs: number;
    readonly tags: Readonly<Record<string, string>>;
  },
): OutgoingMessage[] {
  const forwards = forwardsOf(route, route.links);
  return forwards.map((nodeForwards, index) => ({
    contentType: ContentType.route,
    body: encodeBody('ctrl.Route', {
      circuitId: route.circuitId,
      attempt: route.attempt,
      ...(index === forwards.length - 1
        ? {
            egress: {
              binding: route.binding,
              address: route.egressId,
              destination: route.destination,
              peerData: Object.fromEntries(route.peerData),
            },
          }
        : {}),
      forwards: nodeForwards,
      context: { fields: {}, channelMask: 0 },
      timeout: Math.max(0, Math.round(route.timeoutMs)) * 1_000_000,
      tags: route.tags,
    }),
  }));
}

/** The reference's route error type that says the terminator is gone from its router (`ErrorTypeInvalidTerminator`). */
export const INVALID_TERMINATOR = 1;

/** What a router answered to a Route (1022). */
export type RouteResult =
  | { readonly success: true; readonly peerData: ReadonlyMap<number, Buffer> }
  | { readonly success: false; readonly error: string; readonly errorCode: number | undefined };

/** Peer data of the terminating side: every header from 1000 up but the result's own. */
const isPeerData = (key: number) =>
  key >= 1000 && (key < RouteResultHeader.attempt || key > RouteResultHeader.errorCode);

/** Reads a RouteResult for a route; one for another circuit or attempt is a failure (it answers nothing asked). */
export function routeResultOf(message: ChannelMessage, route: RouteAddresses): RouteResult {
  const failed = (error: string, errorCode?: number) => ({ success: false as const, error, errorCode });
  if (message.contentType !== ContentType.routeResult) return failed(`unexpected answer ${message.contentType}`);
  if (message.body.toString() !== route.circuitId || uint32Of(message, RouteResultHeader.attempt) !== route.attempt) {
    return failed('a route result for another circuit or attempt');
  }
  // A boolean as the reference reads it: the header present and true (a router may send it false with the error).
  if (!isHeaderTrue(message, RouteResultHeader.success)) {
    return failed(
      message.headers.get(RouteResultHeader.error)?.toString() || 'route failed',
      message.headers.get(RouteResultHeader.errorCode)?.[0],
    );
  }
  const peerData = new Map<number, Buffer>();
  for (const [key, value] of message.headers) if (isPeerData(key)) peerData.set(key, value);
  return { success: true, peerData };
}

/** An Unroute (1006): `now` tears the circuit down at once, otherwise once what is in flight has drained. */
export function unrouteMessage(circuitId: string, now: boolean): OutgoingMessage {
  return { contentType: ContentType.unroute, body: encodeBody('ctrl.Unroute', { circuitId, now }) };
}
