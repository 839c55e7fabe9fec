import type { Caller } from '#shared/auth/resolve-caller.ts';
import { type Service, services } from '#shared/entities/service.ts';
import { notFound } from '#shared/errors/api-error.ts';
import { grantAmong, SERVICE_POLICY, type ServiceGrant, selectable } from '#shared/policy/access.ts';
import { policiesSelecting } from '#shared/policy/reach.ts';
import type { Deps } from '#shared/ports/deps.ts';

/**
 * A service the caller may dial or bind, with its grant; 404 otherwise, as if it did not exist (the reference hides
 * what the caller cannot reach). One wave: the service and the caller's policies are read together.
 */
export async function reachableService(
  deps: Deps,
  caller: Caller,
  id: string,
): Promise<{ service: Service; grant: ServiceGrant }> {
  const [stored, policies] = await Promise.all([
    deps.store.get(services, id),
    policiesSelecting(deps.store, SERVICE_POLICY, 'identities', selectable(caller.identity)),
  ]);
  const grant = stored && grantAmong(policies, selectable(stored.doc));
  if (!stored || !grant || grant.policies.length === 0) throw notFound(services.label, id);
  return { service: stored.doc, grant };
}
