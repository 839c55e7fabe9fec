import { type Identity, identities, isDisabledAt } from '#shared/entities/identity.ts';
import type { DialBind } from '#shared/entities/policies.ts';
import { type Service, services } from '#shared/entities/service.ts';
import { edgeRoutersFor, grantOf, selectable } from '#shared/policy/access.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { EdgeErrorCode, EdgeRefusal, RetryHint } from './edge-session-check.ts';

/** A tunneling router's request, checked: the router's own identity and the service it hosts or dials. */
export interface TunnelGrant {
  readonly identity: Identity;
  readonly service: Service;
}

/** The service a tunnel request names: by id (a terminator's create) or by name (a circuit's). */
export type TunnelService = { readonly id: string } | { readonly name: string };

const invalidService = () => new EdgeRefusal(EdgeErrorCode.invalidService, RetryHint.notRetriable, 'invalid service');

async function serviceOf(deps: Deps, named: TunnelService): Promise<Service | undefined> {
  const id = 'id' in named ? named.id : await deps.store.findIdByUnique(services, 'name', named.name);
  return id === undefined ? undefined : (await deps.store.get(services, id))?.doc;
}

/**
 * Checks what a tunneling router asks for its own sake (no SDK behind it, no session) as the reference's tunnel
 * handlers do (`create_tunnel_terminator_v2.go`, `create_tunnel_circuit_V2.go`): the router's identity (its id, type
 * `Router`: `router-identity.ts`) exists, else tunneling is not enabled; the service exists; the identity may reach
 * it through this very router (its edge router policies, the system one included, and the service's service edge
 * router policies). And the identity is granted `permission` by a service policy: Bind to host, as the reference
 * checks a terminator; Dial to intercept, which the reference leaves to the router's own check of its data model.
 * Checked here too because a router's certificate may be an attacker's: a router that may host one service must not
 * reach every other by name. Posture checks are not evaluated (the router has no posture data; the reference's
 * router does not hold its own dial to them either). A disabled router identity is refused, as its tunnel stops
 * when its data model says it is disabled. Refusals are {@link EdgeRefusal}s, the same for a service that does not
 * exist and one not granted, so a router learns no service's name it was not given.
 */
export async function checkTunnelAccess(
  deps: Deps,
  routerId: string,
  named: TunnelService,
  permission: DialBind,
): Promise<TunnelGrant> {
  const [stored, service] = await Promise.all([deps.store.get(identities, routerId), serviceOf(deps, named)]);
  if (stored?.doc.typeId !== 'Router') {
    throw new EdgeRefusal(EdgeErrorCode.tunnelingNotEnabled, RetryHint.notRetriable, 'tunneling not enabled');
  }
  const identity = stored.doc;
  if (isDisabledAt(identity, deps.now())) {
    throw new EdgeRefusal(
      EdgeErrorCode.tunnelingNotEnabled,
      RetryHint.notRetriable,
      "the router's identity is disabled",
    );
  }
  if (!service) throw invalidService();
  const [grant, routers] = await Promise.all([
    grantOf(deps.store, selectable(identity), selectable(service)),
    edgeRoutersFor(deps.store, selectable(identity), selectable(service)),
  ]);
  if (!grant.permissions.has(permission)) throw invalidService();
  if (!routers.includes(routerId)) {
    throw new EdgeRefusal(
      EdgeErrorCode.invalidEdgeRouterForSession,
      RetryHint.startOver,
      'the router may not reach this service through itself',
    );
  }
  return { identity, service };
}
