import { CIRCUIT_TTL_MS, extendCircuit, isOnPath, removeCircuit, storedCircuits } from '#shared/store/circuit-items.ts';
import { idleTooLong } from './circuit-max-idle.ts';
import { unrouteMessage } from './circuit-messages.ts';
import type { ConnectedRouter, ControlContext } from './control-plane.ts';
import { type ChannelMessage, ContentType } from './message.ts';
import { decodeBody } from './protobuf-codec.ts';

interface Fault {
  readonly subject: string;
  readonly id: string;
  readonly iteration: number;
}

interface CircuitConfirmation {
  readonly circuitIds: readonly string[];
  /** How long each circuit was idle, in nanoseconds (a router may name a circuit without its time). */
  readonly idleTimes?: Readonly<Record<string, number>>;
}

/** The fault subjects that end one circuit: its dialer's side or its host's closed (a router sends one of each). */
const CIRCUIT_END_SUBJECTS: ReadonlySet<string> = new Set(['IngressFault', 'EgressFault']);
/** The subjects naming a link (its id and iteration): one of its routers closed it, or kept another link instead. */
const LINK_FAULT_SUBJECTS: ReadonlySet<string> = new Set(['LinkFault', 'LinkDuplicate']);
/** The subjects naming circuits a router could not forward for, several ids separated by spaces. */
const FORWARD_FAULT_SUBJECTS: ReadonlySet<string> = new Set(['ForwardFault', 'UnknownOwnerForwardFault']);
/** A router batches its forward faults; more ids than this in one fault are not a router's. */
const MAX_FAULT_IDS = 1000;
/**
 * How long a circuit's end waits, once, when it finds no stored circuit: one routed by another endpoint may be
 * answered and not yet stored there (`circuit-writes.ts`; a write takes milliseconds). Not for a circuit this
 * endpoint ended itself (the other side's fault of most circuits): those it remembers, this many at most.
 */
export const UNSTORED_END_RETRY_MS = 1_000;
const ENDED_HERE_KEPT = 10_000;

/**
 * How circuits end, as routers report it: the first Fault (1004) of a circuit's side removes the stored circuit and
 * unroutes it gracefully (`now: false`) on its path's routers connected here; later faults for it find nothing. A
 * forward fault names circuits a router holds routes for and could not forward: each is removed and unrouted at once.
 * A CircuitConfirmation (1034), a router's list of its idle circuits, gets the unknown ones unrouted at once (left
 * over from a lost fault or a circuit this controller never made); a known one idle past its service's
 * `maxIdleTimeMillis` by its ingress or egress router's report, or whose service is gone, is removed and unrouted at
 * once (`circuit-max-idle.ts`); the others stay, their item's expiry moved on.
 * Link faults (LinkFault, LinkDuplicate) end the link (`link-reports.ts`), and with it the circuits crossing it
 * (`link-circuits.ts`).
 *
 * Only a router on a circuit's path speaks for it. To any other router, whose certificate may be an attacker's, a
 * circuit it names is as unknown as an id nobody made: its fault or confirmation removes, unroutes and extends
 * nothing, and what it is sent back (an unroute of the id, at once, for a forward fault or a confirmation) concerns
 * its own forwarding table only.
 */
export function circuitEnds(context: ControlContext) {
  const { deps } = context;

  /** Sends an unroute to each router of the path, wherever it is connected (`router-directory.ts`), and to the reporter. */
  const unroute = (reporter: ConnectedRouter, circuitId: string, path: readonly string[], now: boolean) => {
    const routers = new Set([reporter.router.id, ...path]);
    for (const routerId of routers) context.directory.send(routerId, unrouteMessage(circuitId, now));
  };

  /** The circuits this endpoint removed lately, oldest first. */
  const endedHere = new Set<string>();
  const ended = (circuitId: string) => {
    endedHere.add(circuitId);
    if (endedHere.size > ENDED_HERE_KEPT) endedHere.delete(endedHere.values().next().value as string);
  };

  async function fault(router: ConnectedRouter, fault: Fault): Promise<void> {
    if (LINK_FAULT_SUBJECTS.has(fault.subject)) {
      await context.linkReports.fault(router, { ...fault, subject: fault.subject as 'LinkFault' | 'LinkDuplicate' });
      return;
    }
    if (CIRCUIT_END_SUBJECTS.has(fault.subject)) {
      await context.circuitWrites.settled([fault.id]);
      let removed = await removeCircuit(deps.store, fault.id, router.router.id, deps.now());
      if (!removed && fault.id !== '' && !endedHere.has(fault.id)) {
        await new Promise((resolve) => setTimeout(resolve, UNSTORED_END_RETRY_MS));
        removed = await removeCircuit(deps.store, fault.id, router.router.id, deps.now());
      }
      if (removed) ended(removed.id);
      if (removed) {
        unroute(router, removed.id, removed.path, false);
        context.terminatorChoice.circuitRemoved(removed.id);
      }
      return;
    }
    if (!FORWARD_FAULT_SUBJECTS.has(fault.subject)) return;
    const ids = [...new Set(fault.id.split(' ').filter((id) => id !== ''))].slice(0, MAX_FAULT_IDS);
    await context.circuitWrites.settled(ids);
    for (const id of ids) {
      const removed = await removeCircuit(deps.store, id, router.router.id, deps.now());
      unroute(router, id, removed?.path ?? [], true);
      ended(id);
      if (removed) context.terminatorChoice.circuitRemoved(id);
    }
  }

  async function confirmation(router: ConnectedRouter, confirmed: CircuitConfirmation): Promise<void> {
    const ids = confirmed.circuitIds.filter((id) => id !== '').slice(0, MAX_FAULT_IDS);
    if (ids.length === 0) return;
    await context.circuitWrites.settled(ids);
    const now = deps.now();
    const known = await storedCircuits(deps.store, ids, now);
    const ours = [...known.values()].filter((stored) => isOnPath(stored.circuit, router.router.id));
    const settings = await context.terminatorChoice.serviceSettings.of(ours.map((stored) => stored.circuit.serviceId));
    for (const id of ids) {
      const stored = known.get(id);
      if (!stored || !isOnPath(stored.circuit, router.router.id)) {
        router.channel.send(unrouteMessage(id, true));
        continue;
      }
      const service = settings.get(stored.circuit.serviceId);
      const tooLong = idleTooLong(stored.circuit, router.router.id, service, confirmed.idleTimes?.[id]);
      if (tooLong) {
        router.channel.log.info('removing an idle circuit', { circuitId: id, reason: tooLong });
        const removed = await removeCircuit(deps.store, id, router.router.id, now);
        ended(id);
        if (removed) {
          unroute(router, id, removed.path, true);
          context.terminatorChoice.circuitRemoved(id);
        }
      }
      // Idle but there: kept past its TTL, its item's expiry moved on once half of it is spent.
      else if (stored.expiresAtMs - now.getTime() < CIRCUIT_TTL_MS / 2) await extendCircuit(deps.store, id, now);
    }
  }

  /**
   * A handler whose failure is logged (a malformed body as the router's, a table error as the controller's): the
   * router does not wait for an answer.
   */
  const handled =
    (router: ConnectedRouter, event: string, handle: (body: Buffer) => Promise<void>) =>
    async (message: ChannelMessage) => {
      try {
        await handle(message.body);
      } catch (error) {
        router.channel.log.failure(message, event, error);
      }
    };

  return {
    bind(router: ConnectedRouter) {
      router.channel.handle(
        ContentType.fault,
        handled(router, 'ctrl channel fault not handled', (body) => fault(router, decodeBody('ctrl.Fault', body))),
      );
      router.channel.handle(
        ContentType.circuitConfirmation,
        handled(router, 'ctrl channel circuit confirmation not handled', (body) =>
          confirmation(router, decodeBody('ctrl.CircuitConfirmation', body)),
        ),
      );
    },
  };
}
