import { randomUUID } from 'node:crypto';
import { peerDataOf } from '#shared/entities/terminator.ts';
import { CircuitFailure, circuitError } from './circuit-messages.ts';
import { hostIdOf, refusalOf, route, storeAnswered, unrouteEverywhere } from './circuits.ts';
import type { ConnectedRouter, ControlContext } from './control-plane.ts';
import { EdgeErrorCode, EdgeRefusal, RetryHint } from './edge-session-check.ts';
import { type ChannelMessage, ContentType, EdgeHeader } from './message.ts';
import { decodeBody, encodeBody } from './protobuf-codec.ts';
import { checkTunnelAccess } from './tunnel-access.ts';

interface CreateTunnelCircuitV2Request {
  readonly serviceName: string;
  readonly terminatorInstanceId: string;
  /** The intercepted side's peer data: its public key, app data, the connection's two addresses. */
  readonly peerData: Readonly<Record<string, Buffer>>;
}

const missingKey = (side: string) =>
  new EdgeRefusal(
    EdgeErrorCode.encryptionDataMissing,
    RetryHint.startOver,
    `encryption required on service, ${side} did not send public header`,
  );

/**
 * A tunneling router intercepted a connection to a service its data model says its own identity may Dial, and asks
 * for a circuit for itself (CreateTunnelCircuitV2Request, 20220: the service by name, the intercepted side's peer
 * data). Checked as the reference checks it, and for the Dial grant besides (`tunnel-access.ts`), then routed as an
 * SDK's dial is (`circuits.ts`: a terminator of the service and the path to it, the Routes, their results, two attempts), its
 * client the router itself (the tags' `clientId`); answered with CreateTunnelCircuitV2Response (20221: the circuit, the
 * ingress address the router binds the connection to, the host's peer data, the tags) or a 20002 Error with the
 * reason and its code. The circuit is stored as an SDK's is, with no session, and ends the same way (`circuit-ends.ts`).
 */
export function bindTunnelCircuits(context: ControlContext, connected: ConnectedRouter): void {
  connected.channel.handle(ContentType.createTunnelCircuitV2Request, (message) =>
    createTunnelCircuit(context, connected, message),
  );
}

async function createTunnelCircuit(
  context: ControlContext,
  router: ConnectedRouter,
  message: ChannelMessage,
): Promise<void> {
  const { deps } = context;
  const routerId = router.router.id;
  // A body that does not decode is dropped (the channel logs and counts it), as the reference drops it; the router's
  // wait for an answer runs out and the intercepted connection is closed.
  const request = decodeBody<CreateTunnelCircuitV2Request>('edge.CreateTunnelCircuitV2Request', message.body);
  const circuitId = randomUUID();
  const routedOn = new Set<string>();
  try {
    const { service } = await checkTunnelAccess(deps, routerId, { name: request.serviceName }, 'Dial');
    const asked = new Map(Object.entries(request.peerData).map(([key, value]) => [Number(key), value]));
    if (service.encryptionRequired && !asked.has(EdgeHeader.publicKey)) throw missingKey('initiator');
    context.terminatorChoice.serviceSettings.noted(service);
    const tags = (terminator: Parameters<typeof hostIdOf>[0]) => ({
      serviceId: service.id,
      clientId: routerId,
      hostId: hostIdOf(terminator),
    });
    const made = await route(context, router, {
      circuitId,
      asked,
      instanceId: request.terminatorInstanceId,
      serviceId: service.id,
      terminatorStrategy: service.terminatorStrategy,
      tags,
      routedOn,
    });
    const peerData = new Map([...peerDataOf(made.terminator), ...made.peerData]);
    if (service.encryptionRequired && !peerData.has(EdgeHeader.publicKey)) throw missingKey('terminator');
    router.channel.reply(message, {
      contentType: ContentType.createTunnelCircuitV2Response,
      body: encodeBody('edge.CreateTunnelCircuitV2Response', {
        circuitId,
        address: made.ingressId,
        peerData: Object.fromEntries(peerData),
        tags: tags(made.terminator),
      }),
    });
    storeAnswered(
      context,
      router,
      {
        id: circuitId,
        serviceId: service.id,
        path: made.path.nodes,
        ...(made.path.links.length > 0 ? { links: made.path.links } : {}),
        terminatorId: made.terminator.id,
        clientId: routerId,
        hostId: hostIdOf(made.terminator),
        endpointId: context.endpointId,
        createdAt: deps.now().toISOString(),
      },
      new Set(routedOn),
    );
  } catch (error) {
    unrouteEverywhere(context, circuitId, routedOn);
    context.terminatorChoice.circuitRemoved(circuitId);
    const refusal = refusalOf(error);
    if (error instanceof EdgeRefusal || error instanceof CircuitFailure) {
      router.channel.log.warn('ctrl channel refused a tunnel circuit', { circuitId, reason: refusal.message });
    } else {
      router.channel.log.failure(message, 'ctrl channel refused a tunnel circuit', error, { circuitId });
    }
    // No circuit id header: the reference's tunnel handler names none in its refusals.
    router.channel.reply(message, circuitError(refusal.message, refusal.code));
  }
}
