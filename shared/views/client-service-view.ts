import type { DialBind, ServicePolicyRecord } from '../entities/policies.ts';
import type { PostureCheck } from '../entities/posture-check.ts';
import type { Service } from '../entities/service.ts';
import { selfLinks } from './entity-ref.ts';
import { type ServiceConfigMap, serviceView } from './service-view.ts';

/** How one posture check stands for the caller's API session. */
export interface PostureCheckState {
  readonly isPassing: boolean;
  /** The check's timeout in seconds; -1 when it does not time out. */
  readonly timeout: number;
  /** Seconds until the check stops passing; -1 when it does not time out. */
  readonly timeoutRemaining: number;
}

/** A posture check as a posture query of a service (`postureQuery`): what the SDK must answer, and whether it passes. */
export function postureQueryView(check: PostureCheck, state: PostureCheckState) {
  const base = {
    id: check.id,
    createdAt: check.createdAt,
    updatedAt: check.updatedAt,
    tags: check.tags,
    _links: selfLinks('posture-checks', check.id),
    queryType: check.typeId,
    isPassing: state.isPassing,
    timeout: state.timeout,
    timeoutRemaining: state.timeoutRemaining,
  };
  switch (check.typeId) {
    case 'PROCESS':
      return { ...base, process: { osType: check.process.osType, path: check.process.path } };
    case 'PROCESS_MULTI':
      return { ...base, processes: check.processes.map(({ osType, path }) => ({ osType, path })) };
    case 'MFA':
      return { ...base, promptOnWake: check.promptOnWake, promptOnUnlock: check.promptOnUnlock };
    default:
      return base;
  }
}

/** One granting policy's posture queries (`postureQueries`): it passes when every one of its checks does. */
export function policyPostureQueriesView(
  policy: ServicePolicyRecord,
  checks: readonly { readonly check: PostureCheck; readonly state: PostureCheckState }[],
) {
  return {
    policyId: policy.id,
    policyType: policy.type,
    isPassing: checks.every(({ state }) => state.isPassing),
    postureQueries: checks.map(({ check, state }) => postureQueryView(check, state)),
  };
}

export type PolicyPostureQueries = ReturnType<typeof policyPostureQueriesView>;

/** The reference lists Bind before Dial. */
const PERMISSION_ORDER: readonly DialBind[] = ['Bind', 'Dial'];

/**
 * A service as the client API shows it to one identity: what it may do with it, the config data of the types it
 * asked for (its overrides applied), and the posture queries of each policy that grants it.
 */
export function clientServiceView(
  service: Service,
  permissions: ReadonlySet<DialBind>,
  config: ServiceConfigMap,
  postureQueries: readonly PolicyPostureQueries[],
) {
  return {
    ...serviceView(service, config),
    permissions: PERMISSION_ORDER.filter((permission) => permissions.has(permission)),
    postureQueries,
  };
}
