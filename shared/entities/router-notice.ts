/**
 * What a write tells the routers' control channel endpoints beside its own items (`shared/store/ctrl-changes.ts`
 * records it in the write's transaction), for what they hold for their routers that the write may make stale:
 *
 * - `reach`: which identities edge router policies let use which edge routers may have changed, so which API
 *   sessions each router is to hold and which identities and policies its data model holds: one identity's (its role
 *   attributes, it is new, or it was enabled again), or anyone's (an edge router policy, an edge router's role
 *   attributes) when no identity is named.
 * - `certificates`: an identity's certificate changed, and with it the fingerprints routers check its SDKs' against.
 * - `router-ended`: a router was disabled, re-enrolled or deleted; its open control channel is to close.
 * - `services`: a service, a config, a config type, a service policy, a posture check or an identity's config override
 *   was written, which may change the policy part of every router's data model (what the identities that may use it
 *   are granted, what a tunneling router hosts and intercepts): one a transaction ({@link SERVICES_NOTICE}), whatever
 *   it wrote.
 * - `session-removed`: a session (Dial or Bind) was deleted while its API session lives on (`DELETE /sessions/{id}`;
 *   the sessions of an ended API session go with its own `removed` notice): the endpoints' memory of dials drops it.
 * - `ended`: the sessions of an identity a committed change ended (a disable, a lockout, a revocation, the identity's
 *   delete, or an authenticator's delete for those it opened), however many: the routers drop them at once, and a
 *   sweep removes them from the table (`shared/auth/ended-sessions-sweep.ts`).
 * - `terminators`: a terminator of the service was created, changed (its cost, precedence, ...) or deleted, so the
 *   terminators a circuit to it may end at (`ctrl-channel/terminator-cache.ts`): one a transaction and service.
 * - `router-cost`: a router's cost or traversal flag changed, or it was deleted, which weighs the paths through it
 *   (`ctrl-channel/router-cost-cache.ts`).
 *
 * Entity types declare theirs (`EntityDefinition.routerNotices`), so every write of the type, by any path of the kit,
 * makes them.
 */
/**
 * The sessions a change of their identity ends (`isRevoked`): all of the identity's (its delete) or those one
 * authenticator opened and ends with (its delete, a re-enroll), or those created before `endedAt` (a disable, a
 * lockout, an IDENTITY revocation: sessions created after may live).
 */
export interface EndedSessions {
  readonly identityId: string;
  readonly endedAt?: string;
  readonly authenticatorId?: string;
}

export type RouterNotice =
  | { readonly kind: 'ended'; readonly ended: EndedSessions }
  | { readonly kind: 'reach'; readonly identityId?: string }
  | { readonly kind: 'certificates'; readonly identityId: string }
  | { readonly kind: 'router-ended'; readonly routerId: string }
  | { readonly kind: 'services' }
  | { readonly kind: 'session-removed'; readonly sessionId: string }
  | { readonly kind: 'terminators'; readonly serviceId: string }
  | { readonly kind: 'router-cost'; readonly routerId: string };

/**
 * The `services` notice, which says nothing but that such a write happened: a transaction writing several such
 * entities (a service deleted with its identities' overrides) records it once (`WriteOp.notice`).
 */
export const SERVICES_NOTICE: RouterNotice = { kind: 'services' };

/** The `services` notice of every write of an entity type. */
export const servicesNotices = (): readonly RouterNotice[] => [SERVICES_NOTICE];

/**
 * What a transaction needs once however many of its writes make it (`WriteOp.notice`): the `services` notice, and the
 * `terminators` notice of each service (a router's delete takes its terminators of many services, a service's all of
 * its own); undefined for a notice each write makes its own.
 */
export function onceKeyOf(notice: RouterNotice): string | undefined {
  if (notice.kind === 'services') return notice.kind;
  if (notice.kind === 'terminators') return `${notice.kind}#${notice.serviceId}`;
  return undefined;
}

/** The `terminators` notice of the service (or both services) a terminator's write concerns. */
export function terminatorNotices(
  before: { readonly service: string } | undefined,
  after: { readonly service: string } | undefined,
): RouterNotice[] {
  const services = new Set([before?.service, after?.service].filter((id): id is string => id !== undefined));
  return [...services].map((serviceId) => ({ kind: 'terminators', serviceId }));
}

/** A router's change of what a path through it costs (its cost, its traversal flag), or its delete. */
export function routerCostNotices(
  before: { readonly id: string; readonly cost: number; readonly noTraversal: boolean } | undefined,
  after: { readonly cost: number; readonly noTraversal: boolean } | undefined,
): RouterNotice[] {
  const changed = !after || after.cost !== before?.cost || after.noTraversal !== before.noTraversal;
  return before && changed ? [{ kind: 'router-cost', routerId: before.id }] : [];
}

/** Whether two role attribute lists differ, order aside (what edge router policies select by). */
export function rolesDiffer(
  before: { readonly roleAttributes?: readonly string[] },
  after: { readonly roleAttributes?: readonly string[] },
): boolean {
  const sorted = (roles: readonly string[] = []) => JSON.stringify([...roles].sort());
  return sorted(before.roleAttributes) !== sorted(after.roleAttributes);
}

/**
 * A router's channel ends when the router is deleted, disabled, or loses the certificate it enrolled with (a
 * re-enroll clears it). An extension (a new fingerprint) does not end it: the router extended its own certificate,
 * and the channel it holds is still its own.
 */
export function routerEndedNotices(
  before: { readonly id: string; readonly disabled: boolean; readonly fingerprint: string | null } | undefined,
  after: { readonly disabled: boolean; readonly fingerprint: string | null } | undefined,
): RouterNotice[] {
  const ended =
    !after || (after.disabled && !before?.disabled) || (before?.fingerprint != null && after.fingerprint === null);
  return before && ended ? [{ kind: 'router-ended', routerId: before.id }] : [];
}

/**
 * The sessions an identity's change ends: all of them when it is deleted; those created before a new
 * `sessionsValidFrom` (a disable, a lockout, an IDENTITY revocation: each sets it).
 */
export function identityEndedNotices(
  before: { readonly id: string; readonly sessionsValidFrom?: string | null } | undefined,
  after: { readonly sessionsValidFrom?: string | null } | undefined,
): RouterNotice[] {
  if (!before) return [];
  const endedAt = after?.sessionsValidFrom;
  if (!after) return [{ kind: 'ended', ended: { identityId: before.id } }];
  return endedAt && endedAt !== before.sessionsValidFrom
    ? [{ kind: 'ended', ended: { identityId: before.id, endedAt } }]
    : [];
}
