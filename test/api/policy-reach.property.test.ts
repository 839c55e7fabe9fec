import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  edgeRoutersFor,
  edgeRoutersOfIdentity,
  edgeRoutersOfService,
  grantOf,
  identitiesOfEdgeRouter,
  identitiesOfService,
  servicesOfEdgeRouter,
  servicesOfIdentity,
} from '#shared/policy/access.ts';
import { useAdminController } from '../support/admin-controller.ts';

/**
 * Every reach answer equals a brute-force evaluation of the reference's match rule (guide §e) over everything the
 * controller holds. fast-check builds random networks (identities, services and edge routers with attributes from a
 * small pool, so policies overlap; policies with `#attr`, `@id` and `#all` roles, AllOf and AnyOf), writes them
 * through the management API, and compares both the reach functions and the served management reach lists
 * (`/identities/{id}/services`, `/services/{id}/identities`, the edge-router lists). Entities accumulate across runs
 * (so `#all` and shared attributes reach earlier runs' entities too, and the oracle covers them); each run deletes
 * its policies at the end.
 */

const { controller, call, createdId } = useAdminController();

const ATTRIBUTES = ['red', 'green', 'blue'] as const;
type Semantic = 'AllOf' | 'AnyOf';
type DialBind = 'Dial' | 'Bind';

interface Entity {
  id: string;
  attributes: string[];
}

/** A role before the entities exist: an attribute, `#all`, or the n-th entity of the run's side (`@id`). */
type RoleSpec = { attribute: string } | { all: true } | { named: number };

interface PolicySpec {
  semantic: Semantic;
  type: DialBind;
  left: RoleSpec[];
  right: RoleSpec[];
}

/** The oracle: the §e rule written out from its definition, independent of the code under test. */
function selects(roles: readonly string[], semantic: Semantic, entity: Entity): boolean {
  if (roles.includes('#all')) return true;
  if (roles.includes(`@${entity.id}`)) return true;
  const wanted = roles.filter((role) => role.startsWith('#')).map((role) => role.slice(1));
  if (wanted.length === 0) return false;
  const matches = wanted.filter((attribute) => entity.attributes.includes(attribute)).length;
  return semantic === 'AllOf' ? matches === wanted.length : matches > 0;
}

interface Policy {
  semantic: Semantic;
  type: DialBind;
  left: string[];
  right: string[];
}

const attributesArb = fc.subarray([...ATTRIBUTES]);
const roleArb = (sideSize: number): fc.Arbitrary<RoleSpec> =>
  fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...ATTRIBUTES).map((attribute) => ({ attribute })) },
    { weight: 2, arbitrary: fc.nat({ max: Math.max(0, sideSize - 1) }).map((named) => ({ named })) },
    { weight: 1, arbitrary: fc.constant({ all: true as const }) },
  );
const rolesArb = (sideSize: number): fc.Arbitrary<RoleSpec[]> =>
  fc.oneof(
    fc.constant<RoleSpec[]>([{ all: true }]),
    fc.array(roleArb(sideSize), { maxLength: 3 }).map((roles) => roles.filter((role) => !('all' in role))),
  );
const policyArb = (leftSize: number, rightSize: number): fc.Arbitrary<PolicySpec> =>
  fc.record<PolicySpec>({
    semantic: fc.constantFrom<Semantic>('AllOf', 'AnyOf'),
    type: fc.constantFrom<DialBind>('Dial', 'Bind'),
    left: rolesArb(leftSize),
    right: rolesArb(rightSize),
  });

const networkArb = fc
  .record({
    identities: fc.array(attributesArb, { minLength: 1, maxLength: 4 }),
    services: fc.array(attributesArb, { minLength: 1, maxLength: 4 }),
    routers: fc.array(attributesArb, { minLength: 1, maxLength: 3 }),
  })
  .chain((sizes) =>
    fc.record({
      identities: fc.constant(sizes.identities),
      services: fc.constant(sizes.services),
      routers: fc.constant(sizes.routers),
      servicePolicies: fc.array(policyArb(sizes.identities.length, sizes.services.length), { maxLength: 4 }),
      edgeRouterPolicies: fc.array(policyArb(sizes.identities.length, sizes.routers.length), { maxLength: 3 }),
      serviceEdgeRouterPolicies: fc.array(policyArb(sizes.services.length, sizes.routers.length), { maxLength: 3 }),
      /** An identity whose attributes change after the first check, and its new attributes. */
      changed: fc.record({ index: fc.nat(), attributes: attributesArb }),
    }),
  );

const sorted = (ids: Iterable<string>) => [...ids].sort();

describe('policy reach (property: equals a brute-force evaluation of the match rule)', () => {
  const identities: Entity[] = [];
  const services: Entity[] = [];
  const routers: Entity[] = [];
  let run = 0;

  const roleOf = (spec: RoleSpec, side: readonly Entity[]): string => {
    if ('all' in spec) return '#all';
    if ('attribute' in spec) return `#${spec.attribute}`;
    return `@${side[spec.named % side.length]?.id}`;
  };

  async function createPolicy(path: string, body: Record<string, unknown>): Promise<string> {
    return createdId(path, { name: `${path.slice(1)}-${run}-${Math.random().toString(36).slice(2)}`, ...body });
  }

  it('answers every reach question and every grant as the match rule does', async () => {
    await fc.assert(
      fc.asyncProperty(networkArb, async (network) => {
        run++;
        const store = controller().deps.store;
        if (run === 1) {
          // What the controller holds before the first run (the default admin) is part of the network too.
          const existing = await call('GET', '/identities?limit=500');
          for (const identity of existing.body.data as { id: string; roleAttributes: string[] | null }[]) {
            identities.push({ id: identity.id, attributes: identity.roleAttributes ?? [] });
          }
        }
        const create = async (path: string, attributes: string[], extra: Record<string, unknown>) => {
          const name = `${path.slice(1)}-${run}-${Math.random().toString(36).slice(2)}`;
          return { id: await createdId(path, { name, roleAttributes: attributes, ...extra }), attributes };
        };
        const newIdentities = await Promise.all(
          network.identities.map((a) => create('/identities', a, { type: 'User', isAdmin: false })),
        );
        const newServices = await Promise.all(network.services.map((a) => create('/services', a, {})));
        const newRouters = await Promise.all(network.routers.map((a) => create('/edge-routers', a, {})));
        identities.push(...newIdentities);
        services.push(...newServices);
        routers.push(...newRouters);

        const materialise = (spec: PolicySpec, left: Entity[], right: Entity[]): Policy => ({
          semantic: spec.semantic,
          type: spec.type,
          left: [...new Set(spec.left.map((role) => roleOf(role, left)))],
          right: [...new Set(spec.right.map((role) => roleOf(role, right)))],
        });
        const sps = network.servicePolicies.map((spec) => materialise(spec, newIdentities, newServices));
        const erps = network.edgeRouterPolicies.map((spec) => materialise(spec, newIdentities, newRouters));
        const serps = network.serviceEdgeRouterPolicies.map((spec) => materialise(spec, newServices, newRouters));
        const created: string[] = [];
        try {
          for (const p of sps) {
            const body = { semantic: p.semantic, type: p.type, identityRoles: p.left, serviceRoles: p.right };
            created.push(`/service-policies/${await createPolicy('/service-policies', body)}`);
          }
          for (const p of erps) {
            const body = { semantic: p.semantic, identityRoles: p.left, edgeRouterRoles: p.right };
            created.push(`/edge-router-policies/${await createPolicy('/edge-router-policies', body)}`);
          }
          for (const p of serps) {
            const body = { semantic: p.semantic, serviceRoles: p.left, edgeRouterRoles: p.right };
            created.push(`/service-edge-router-policies/${await createPolicy('/service-edge-router-policies', body)}`);
          }

          /** The ids a management reach list serves (the served lists must give the same answers). */
          const listed = async (path: string) => {
            const response = await call('GET', `${path}?limit=500`);
            expect(response.status, path).toBe(200);
            return sorted((response.body.data as { id: string }[]).map((item) => item.id));
          };
          const check = async () => {
            for (const identity of identities.slice(-8)) {
              const expected = new Map<string, string[]>();
              for (const service of services) {
                const types = sps
                  .filter((p) => selects(p.left, p.semantic, identity) && selects(p.right, p.semantic, service))
                  .map((p) => p.type);
                if (types.length > 0) expected.set(service.id, sorted(new Set(types)));
              }
              const actual = await servicesOfIdentity(store, identity);
              expect(
                sorted(actual.keys()).map((id) => [id, sorted(actual.get(id)?.permissions ?? [])]),
                `services of ${identity.id}`,
              ).toEqual(sorted(expected.keys()).map((id) => [id, expected.get(id)]));

              const routersOfIdentity = routers.filter((r) =>
                erps.some((p) => selects(p.left, p.semantic, identity) && selects(p.right, p.semantic, r)),
              );
              expect(await edgeRoutersOfIdentity(store, identity)).toEqual(sorted(routersOfIdentity.map((r) => r.id)));
              if (newIdentities.includes(identity)) {
                expect(await listed(`/identities/${identity.id}/services`)).toEqual(sorted(expected.keys()));
                expect(await listed(`/identities/${identity.id}/edge-routers`)).toEqual(
                  sorted(routersOfIdentity.map((r) => r.id)),
                );
              }

              for (const service of newServices) {
                const grant = await grantOf(store, identity, service);
                expect(sorted(grant.permissions), `grant ${identity.id} → ${service.id}`).toEqual(
                  expected.get(service.id) ?? [],
                );
                const routersOfService = routers.filter((r) =>
                  serps.some((p) => selects(p.left, p.semantic, service) && selects(p.right, p.semantic, r)),
                );
                const usable = routersOfIdentity.filter((r) => routersOfService.includes(r));
                expect(await edgeRoutersFor(store, identity, service)).toEqual(sorted(usable.map((r) => r.id)));
              }
            }
            for (const service of newServices) {
              const expected = identities.filter((identity) =>
                sps.some((p) => selects(p.left, p.semantic, identity) && selects(p.right, p.semantic, service)),
              );
              const actual = await identitiesOfService(store, service);
              expect(sorted(actual.keys()), `identities of ${service.id}`).toEqual(sorted(expected.map((i) => i.id)));
              const expectedRouters = routers.filter((r) =>
                serps.some((p) => selects(p.left, p.semantic, service) && selects(p.right, p.semantic, r)),
              );
              expect(await edgeRoutersOfService(store, service)).toEqual(sorted(expectedRouters.map((r) => r.id)));
              expect(await listed(`/services/${service.id}/identities`)).toEqual(sorted(expected.map((i) => i.id)));
              expect(await listed(`/services/${service.id}/edge-routers`)).toEqual(
                sorted(expectedRouters.map((r) => r.id)),
              );
            }
            for (const router of newRouters) {
              const expectedIdentities = identities.filter((identity) =>
                erps.some((p) => selects(p.left, p.semantic, identity) && selects(p.right, p.semantic, router)),
              );
              expect(await identitiesOfEdgeRouter(store, router)).toEqual(sorted(expectedIdentities.map((i) => i.id)));
              const expectedServices = services.filter((service) =>
                serps.some((p) => selects(p.left, p.semantic, service) && selects(p.right, p.semantic, router)),
              );
              expect(await servicesOfEdgeRouter(store, router)).toEqual(sorted(expectedServices.map((s) => s.id)));
              expect(await listed(`/edge-routers/${router.id}/identities`)).toEqual(
                sorted(expectedIdentities.map((i) => i.id)),
              );
              expect(await listed(`/edge-routers/${router.id}/services`)).toEqual(
                sorted(expectedServices.map((s) => s.id)),
              );
            }
          };

          await check();

          // An identity's attributes change: its reach follows at once (nothing is materialised to go stale).
          const changed = newIdentities[network.changed.index % newIdentities.length];
          if (changed) {
            const response = await call('PATCH', `/identities/${changed.id}`, {
              roleAttributes: network.changed.attributes,
            });
            expect(response.status).toBe(200);
            changed.attributes = network.changed.attributes;
            await check();
          }
        } finally {
          // Even when a check failed: the next run (and fast-check's shrinking) must start without these policies.
          for (const path of created) expect((await call('DELETE', path)).status).toBe(200);
        }
      }),
      { numRuns: 12 },
    );
  }, 240_000);
});
