import { everyCircuit, removeCircuit } from '#shared/store/circuit-items.ts';
import { unrouteMessage } from './circuit-messages.ts';
import type { ControlContext } from './control-plane.ts';

/**
 * The circuits that crossed a link now gone end: when this endpoint's link graph forgets a link (a router's LinkFault
 * or LinkDuplicate, a link that died with its router's connection, another endpoint's notice of either), every stored
 * circuit whose links name it is removed and unrouted at once on each router of its path, as the reference removes a
 * circuit it could not reroute. Every endpoint does this for the links it forgets; only one removes the item (the
 * delete is conditional), and that one unroutes every router of the path, through the other endpoints' relays for
 * theirs; the others find it gone.
 *
 * Not rerouted onto another path (the reference's `rerouteLink` tries): the SDKs see the circuit close and dial
 * again, which chooses a new path. The circuits are found by reading every circuit (GSI1's `circuits` partition, a
 * moment behind: a circuit made in the same second as the fault may be missed, and is then ended by its routers'
 * forward faults); links are lost rarely, and the endpoints' circuit caches (design step 8) will replace the read.
 */
export function endCircuitsOnLostLinks(context: ControlContext): void {
  const { deps } = context;
  const lost = new Set<string>();
  let running = false;

  async function endLost(): Promise<void> {
    while (lost.size > 0) {
      const linkIds = new Set(lost);
      lost.clear();
      await context.circuitWrites.settled();
      const now = deps.now();
      const crossing = (await everyCircuit(deps.store, now)).filter((circuit) =>
        circuit.links?.some((linkId) => linkIds.has(linkId)),
      );
      for (const circuit of crossing) {
        const linkId = circuit.links?.find((id) => linkIds.has(id));
        // Its terminator's strategy no longer counts it (an endpoint that never routed it knows nothing of it).
        context.terminatorChoice.circuitRemoved(circuit.id);
        // The endpoint whose delete removes it unroutes it on every router of its path, wherever each is connected
        // (`router-directory.ts`); another finds it gone and leaves it (its read may be a moment behind that delete).
        if (!(await removeCircuit(deps.store, circuit.id, circuit.path[0] ?? '', now))) continue;
        for (const routerId of circuit.path) context.directory.send(routerId, unrouteMessage(circuit.id, true));
        deps.logger.info('ctrl channel circuit ended: a link it crossed is gone', {
          circuitId: circuit.id,
          linkId,
          path: circuit.path.join(' '),
        });
      }
    }
  }

  function schedule(): void {
    if (running) return;
    running = true;
    void endLost()
      .catch((error: unknown) =>
        deps.logger.warn('ctrl channel circuits crossing a lost link not ended', {
          detail: (error as Error).message,
        }),
      )
      .finally(() => {
        running = false;
        // A link lost between the last read and now.
        if (lost.size > 0) schedule();
      });
  }

  context.linkGraph.onRemoved((link) => {
    lost.add(link.id);
    schedule();
  });
}
