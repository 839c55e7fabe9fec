import { type EdgeRouter, edgeRouters } from '#shared/entities/edge-router.ts';
import { type Identity, identities } from '#shared/entities/identity.ts';
import { type PostureCheck, postureChecks } from '#shared/entities/posture-check.ts';
import { type Service, services } from '#shared/entities/service.ts';
import { identityPageViews, identityView } from '#shared/views/identity-view.ts';
import { postureCheckView } from '#shared/views/posture-check-view.ts';
import { edgeRouterViews } from '#shared/views/router-view.ts';
import { serviceView } from '#shared/views/service-view.ts';
import type { EntityViews } from './entity-page.ts';

/** The entity types reach and policy lists show, with the views their own management lists show. */
export const IDENTITY_VIEWS: EntityViews<Identity> = {
  def: identities,
  view: (deps, doc) => identityView(deps, doc),
  viewPage: identityPageViews,
};
export const SERVICE_VIEWS: EntityViews<Service> = { def: services, view: (_deps, doc) => serviceView(doc) };
export const EDGE_ROUTER_VIEWS: EntityViews<EdgeRouter> = {
  def: edgeRouters,
  view: async (deps, doc) => (await edgeRouterViews(deps, [doc]))[0],
  viewPage: edgeRouterViews,
};
export const POSTURE_CHECK_VIEWS: EntityViews<PostureCheck> = {
  def: postureChecks,
  view: (_deps, doc) => postureCheckView(doc),
};
