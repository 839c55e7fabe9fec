import { hasLiveApiSession } from '../auth/api-session-store.ts';
import { VIEW_CONCURRENCY } from '../crud/page-views.ts';
import { authPolicies } from '../entities/auth-policy.ts';
import { cas } from '../entities/ca.ts';
import type { Identity } from '../entities/identity.ts';
import { mapBounded } from '../map-bounded.ts';
import type { Deps } from '../ports/deps.ts';
import { listChildren } from '../store/children.ts';
import { entityRef, selfLinks } from './entity-ref.ts';
import { type NameLookup, nameLookup } from './name-lookup.ts';

/**
 * The identity detail: the stored document plus what is derived from its children (authenticators, outstanding
 * enrollments, live API sessions) and references (type, auth policy, an ottca enrollment's CA). Two GSI2 queries, and
 * one read per auth policy and CA (shared across a page when the caller passes one lookup for all of it).
 */
export async function identityView(
  deps: Deps,
  identity: Identity,
  policyName: NameLookup = nameLookup(deps, authPolicies),
  // Read only for an outstanding ottca enrollment.
  caName: NameLookup = nameLookup(deps, cas),
) {
  const [children, authPolicyName, hasApiSession] = await Promise.all([
    listChildren(deps, 'identities', identity.id),
    policyName(identity.authPolicyId),
    hasLiveApiSession(deps, identity),
  ]);
  const authenticators: Record<string, unknown> = {};
  const enrollment: Record<string, unknown> = {};
  let isMfaEnabled = false;
  for (const { collection, doc } of children) {
    if (collection === 'mfas') isMfaEnabled = doc.isVerified === true;
    if (collection === 'authenticators' && doc.method === 'updb') {
      authenticators.updb = { id: doc.id, username: doc.username };
    } else if (collection === 'authenticators' && doc.method === 'cert') {
      authenticators.cert = { id: doc.id, fingerprint: doc.fingerprint };
    } else if (collection === 'enrollments' && typeof doc.method === 'string') {
      enrollment[doc.method] = {
        id: doc.id,
        token: doc.token,
        ...(typeof doc.jwt === 'string' ? { jwt: doc.jwt } : {}),
        expiresAt: doc.expiresAt,
        ...(doc.method === 'ottca' && typeof doc.caId === 'string'
          ? { caId: doc.caId, ca: entityRef('cas', doc.caId, await caName(doc.caId)) }
          : {}),
      };
    }
  }
  // When the identity's sessions were revoked and which authenticators live are kept for checking sessions, and its
  // trace for `/trace`: not shown (the authenticators are, from the children).
  const {
    envInfo,
    sdkInfo,
    sessionsValidFrom: _sessionsValidFrom,
    updbAuthenticatorId: _updbAuthenticatorId,
    certAuthenticatorId: _certAuthenticatorId,
    tracing: _tracing,
    ...rest
  } = identity;
  return {
    ...rest,
    _links: selfLinks('identities', identity.id, {
      'edge-router-policies': 'edge-router-policies',
      'edge-routers': 'edge-routers',
      'service-policies': 'service-policies',
      services: 'services',
      'posture-data': 'posture-data',
      'failed-service-requests': 'failed-service-requests',
    }),
    type: entityRef('identity-types', identity.typeId, identity.typeId),
    authPolicy: entityRef('auth-policies', identity.authPolicyId, authPolicyName),
    authenticators,
    enrollment,
    envInfo: envInfo ?? {},
    sdkInfo: sdkInfo ?? {},
    hasApiSession,
    hasEdgeRouterConnection: false,
    edgeRouterConnectionStatus: 'offline',
    isMfaEnabled,
    permissions: [],
  };
}

/** A page of identity details: the auth policies' names read once for the whole page. */
export function identityPageViews(deps: Deps, identities: readonly Identity[]) {
  const policyName = nameLookup(deps, authPolicies);
  return mapBounded(identities, VIEW_CONCURRENCY, (identity) => identityView(deps, identity, policyName));
}
