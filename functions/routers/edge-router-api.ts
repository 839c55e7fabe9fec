import * as z from 'zod';
import { getOrNotFound, sentKeys, withOptimisticRetry } from '#shared/crud/crud-operations.ts';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import { type EdgeRouter, edgeRouters } from '#shared/entities/edge-router.ts';
import { identities } from '#shared/entities/identity.ts';
import { transitRouters } from '#shared/entities/router.ts';
import { empty } from '#shared/http/envelope.ts';
import { documented, type Operation } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { nameField, roleAttributesField } from '#shared/schemas/common-fields.ts';
import { appDataSchema } from '#shared/schemas/map-field.ts';
import { MAX_TRANSACTION_ITEMS } from '#shared/store/entity-store.ts';
import { itemCount, namedRoleWrites, writesBeside } from '#shared/store/policies-naming.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { edgeRouterView } from '#shared/views/router-view.ts';
import { nameFreeAmong, newRouterEnrollment, patchedInput, routerFields, routerInputShape } from './router-fields.ts';
import { createRouterIdentityOps, syncRouterIdentityOps } from './router-identity.ts';
import { createSystemPolicyOps, SYSTEM_POLICY_ROOM, syncSystemPolicyOps } from './router-system-policy.ts';

const edgeInputShape = {
  ...routerInputShape,
  appData: appDataSchema.nullable().optional(),
  isTunnelerEnabled: z.boolean().nullable().optional(),
  roleAttributes: roleAttributesField.optional(),
};
const createSchema = z.object({ name: nameField, ...edgeInputShape });
const patchSchema = z.object({ name: nameField.nullable().optional(), ...edgeInputShape });
type EdgeRouterInput = z.infer<typeof createSchema>;
type EdgeRouterPatch = z.infer<typeof patchSchema>;

/** The stored fields a create or replace sets from its body; absent optional fields take their zero values. */
function edgeFields(input: EdgeRouterInput) {
  return {
    ...routerFields(input),
    appData: input.appData ?? {},
    isTunnelerEnabled: input.isTunnelerEnabled ?? false,
    roleAttributes: input.roleAttributes ?? [],
  };
}

/** A stored edge router as the replace body that would produce it, so a patch is a replace of what was not sent. */
function asInput(router: EdgeRouter): EdgeRouterInput {
  const { name, cost, disabled, noTraversal, tags, appData, isTunnelerEnabled, roleAttributes } = router;
  return { name, cost, disabled, noTraversal, tags, appData, isTunnelerEnabled, roleAttributes };
}

function patched(before: EdgeRouter, input: EdgeRouterPatch, sent: ReadonlySet<string>): EdgeRouter {
  return { ...before, ...edgeFields(patchedInput(asInput(before), input, sent)) };
}

/**
 * The writes that bring what tunneling gives a router (its identity and its system edge router policy) in line with
 * the router as it will be (`after`; undefined when it is deleted), read together.
 */
async function syncTunnelingOps(
  deps: Deps,
  routerId: string,
  after: EdgeRouter | undefined,
  room: number,
  now = deps.now().toISOString(),
): Promise<WriteOp[]> {
  // Turning tunneling off deletes the router identity, so the policies naming it by `@id` lose it in the same change
  // (a router's delete has that done by `deleteEntity`: see `namedWith`).
  const naming =
    after && !after.isTunnelerEnabled
      ? await namedRoleWrites(deps.store, [{ collection: identities.collection, id: routerId }])
      : [];
  const [policyOps, identityOps] = await Promise.all([
    syncSystemPolicyOps(deps, routerId, after, now),
    // The policy's writes are few (a handful of items); the identity's API sessions take what room is left.
    syncRouterIdentityOps(deps, routerId, after, now, room - SYSTEM_POLICY_ROOM - itemCount(naming)),
  ]);
  const ops = [...identityOps, ...policyOps];
  return [...ops, ...writesBeside(naming, ops)];
}

/**
 * Edge routers. Creating one makes its one-time enrollment, and its router identity and system edge router policy
 * when it tunnels; deleting it deletes those in the same transaction (its terminators are `cascade` children the kit deletes with it).
 */
export const edgeRouterApi: EntityApi<EdgeRouter, EdgeRouterInput, never, never> = {
  def: edgeRouters,
  createSchema,
  roleFilter: true,
  create: async (input, context) => {
    const doc: EdgeRouter = {
      id: context.id,
      createdAt: context.now,
      updatedAt: context.now,
      ...edgeFields(input),
      ...(await newRouterEnrollment(context, 'erott')),
    };
    return {
      doc,
      ops: [
        nameFreeAmong(context.deps, transitRouters.collection, doc.name),
        ...(doc.isTunnelerEnabled
          ? [
              ...createRouterIdentityOps(context.deps, doc, context.now),
              ...createSystemPolicyOps(context.deps, doc.id, context.now),
            ]
          : []),
      ],
    };
  },
  view: (_deps, doc) => edgeRouterView(doc),
  deleteOps: (deps, stored, room) => syncTunnelingOps(deps, stored.doc.id, undefined, room),
  // Its router identity (same id) goes with it, so policies naming that identity by `@id` lose it too.
  namedWith: (router) => [{ collection: identities.collection, id: router.id }],
};

/**
 * PUT and PATCH of an edge router: besides the router, the same transaction creates, renames or deletes its router
 * identity and creates or deletes its system edge router policy as `isTunnelerEnabled` and the name say, which the
 * generic update (it sees only the new document) cannot.
 */
function updateEdgeRouter(action: 'replace' | 'patch'): Operation {
  const operation: Operation = async (request, deps) => {
    const body = request.body === undefined ? {} : request.body;
    const input = action === 'replace' ? parseWith(createSchema, body) : parseWith(patchSchema, body);
    const sent = sentKeys(request.body);
    await withOptimisticRetry(async () => {
      const stored = await getOrNotFound(deps, edgeRouters, request.pathParameters.id ?? '');
      const now = deps.now().toISOString();
      const next: EdgeRouter = {
        ...(action === 'replace'
          ? { ...stored.doc, ...edgeFields(input as EdgeRouterInput) }
          : patched(stored.doc, input, sent)),
        updatedAt: now,
      };
      const ops = [
        ...deps.store.replaceOps(edgeRouters, stored, next),
        nameFreeAmong(deps, transitRouters.collection, next.name),
      ];
      ops.push(...(await syncTunnelingOps(deps, next.id, next, MAX_TRANSACTION_ITEMS - ops.length, now)));
      await deps.store.transact(ops);
    });
    return empty();
  };
  return documented(operation, { body: action === 'replace' ? createSchema : patchSchema });
}

export const updateEdgeRouterOperations = {
  replace: updateEdgeRouter('replace'),
  patch: updateEdgeRouter('patch'),
};
