import { getOrNotFound } from '#shared/crud/crud-operations.ts';
import { listRoleAttributes } from '#shared/crud/list-role-attributes.ts';
import { authenticators } from '#shared/entities/authenticator.ts';
import { cas } from '#shared/entities/ca.ts';
import { ENTITY_DEFINITIONS } from '#shared/entities/definitions.ts';
import { enrollments } from '#shared/entities/enrollment.ts';
import { identities } from '#shared/entities/identity.ts';
import { list, ok } from '#shared/http/envelope.ts';
import type { Operation } from '#shared/http/operation.ts';
import { listChildren } from '#shared/store/children.ts';
import { count } from '#shared/store/index-queries.ts';
import { authenticatorView } from '#shared/views/authenticator-view.ts';
import { enrollmentView } from '#shared/views/enrollment-view.ts';
import { nameLookup } from '#shared/views/name-lookup.ts';

/** `GET /identity-role-attributes`: the role attributes identities hold, from the role-attribute catalog. */
export const listIdentityRoleAttributes: Operation = (request, deps) =>
  listRoleAttributes(request, deps, identities.collection);

/** `GET /identities/{id}/authenticators`. */
export const getIdentityAuthenticators: Operation = async (request, deps) => {
  const identity = await getOrNotFound(deps, identities, request.pathParameters.id ?? '');
  const children = await listChildren(deps, identities.collection, identity.doc.id, authenticators.collection);
  const views = children.map((child) => authenticatorView(authenticators.schema.parse(child.doc), identity.doc.name));
  return list(views, { limit: -1, offset: 0, totalCount: views.length }, Object.keys(authenticators.filterable));
};

/** `GET /identities/{id}/enrollments`. */
export const getIdentityEnrollments: Operation = async (request, deps) => {
  const identity = await getOrNotFound(deps, identities, request.pathParameters.id ?? '');
  const children = await listChildren(deps, identities.collection, identity.doc.id, enrollments.collection);
  const caName = nameLookup(deps, cas);
  const views = await Promise.all(
    children.map(async (child) => {
      const enrollment = enrollments.schema.parse(child.doc);
      const ca = enrollment.caId ? await caName(enrollment.caId) : undefined;
      return enrollmentView(enrollment, identity.doc.name, ca);
    }),
  );
  return list(views, { limit: -1, offset: 0, totalCount: views.length }, Object.keys(enrollments.filterable));
};

/** A collection's key in the summary: `auth-policies` → `authPolicies`. */
function summaryKeyOf(collection: string): string {
  return collection.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/** `GET /summary`: how many of each declared entity type exist, from the per-type counters. */
export const listSummary: Operation = async (_request, deps) => {
  const entries = await Promise.all(
    ENTITY_DEFINITIONS.map(
      async (def) => [summaryKeyOf(def.collection), await count(deps.store, def.collection)] as const,
    ),
  );
  return ok(Object.fromEntries(entries));
};
