import { VIEW_CONCURRENCY } from '#shared/crud/page-views.ts';
import { services } from '#shared/entities/service.ts';
import { notFound } from '#shared/errors/api-error.ts';
import { ok } from '#shared/http/envelope.ts';
import { documented, type Operation } from '#shared/http/operation.ts';
import { mapBounded } from '#shared/map-bounded.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { FilterableFields } from '#shared/query/filterable-fields.ts';
import { type CircuitRecord, everyCircuit, readCircuit } from '#shared/store/circuit-items.ts';
import { entityRef, selfLinks } from '#shared/views/entity-ref.ts';
import { type NameLookup, nameLookup } from '#shared/views/name-lookup.ts';
import { listInMemory } from './in-memory-list.ts';
import { routerNames } from './router-names.ts';

/** What the circuits list filters and sorts on: the circuit, its Dial session (`clientId`), service and terminator. */
const CIRCUIT_FILTERABLE: FilterableFields = {
  id: 'string',
  createdAt: 'datetime',
  clientId: 'string',
  service: 'string',
  terminator: 'string',
};

/** The circuit's client: its Dial session, or for a tunneling router's own circuit (no session) the router's identity. */
const clientOf = (circuit: CircuitRecord) => circuit.sessionId ?? circuit.clientId;

const recordOf = (circuit: CircuitRecord) => ({
  id: circuit.id,
  createdAt: circuit.createdAt,
  clientId: clientOf(circuit),
  service: circuit.serviceId,
  terminator: circuit.terminatorId,
});

interface CircuitNames {
  readonly service: NameLookup;
  readonly router: NameLookup;
}

const circuitNames = (deps: Deps): CircuitNames => ({ service: nameLookup(deps, services), router: routerNames(deps) });

/**
 * A circuit as the fabric API shows it (the reference's `circuitDetail`): its Dial session as `clientId` (the
 * reference's), its service and terminator, and its path as routers (`nodes`, ingress first) and the links between
 * them (`links`, one fewer: the CLI reads `links[i-1]` beside `nodes[i]`). A terminator has no name: its id names it,
 * as the reference's. A circuit is stored once and never changed, so it was last updated when it was made.
 */
async function circuitView(circuit: CircuitRecord, names: CircuitNames) {
  const [serviceName, routerNamesOnPath] = await Promise.all([
    names.service(circuit.serviceId),
    Promise.all(circuit.path.map((routerId) => names.router(routerId))),
  ]);
  return {
    id: circuit.id,
    createdAt: circuit.createdAt,
    updatedAt: circuit.createdAt,
    tags: {},
    _links: selfLinks('circuits', circuit.id),
    clientId: clientOf(circuit),
    service: entityRef('services', circuit.serviceId, serviceName),
    terminator: entityRef('terminators', circuit.terminatorId, circuit.terminatorId),
    path: {
      nodes: circuit.path.map((routerId, index) => entityRef('routers', routerId, routerNamesOnPath[index]!)),
      links: (circuit.links ?? []).map((linkId) => entityRef('links', linkId, linkId)),
    },
  };
}

/** `GET /circuits`: the live circuits, filtered, sorted and paged in memory (`everyCircuit` reads them whole). */
export const listFabricCircuits: Operation = documented(
  (request, deps) =>
    listInMemory(request, {
      fields: CIRCUIT_FILTERABLE,
      recordOf,
      read: () => everyCircuit(deps.store, deps.now()),
      views: (page) => {
        const names = circuitNames(deps);
        return mapBounded(page, VIEW_CONCURRENCY, (circuit) => circuitView(circuit, names));
      },
    }),
  { list: { roleFilter: false } },
);

/** `GET /circuits/{id}`: one live circuit; 404 once it ended. */
export const detailFabricCircuit: Operation = async (request, deps) => {
  const id = request.pathParameters.id ?? '';
  const circuit = await readCircuit(deps.store, id, deps.now());
  if (!circuit) throw notFound('circuit', id);
  return ok(await circuitView(circuit, circuitNames(deps)));
};
