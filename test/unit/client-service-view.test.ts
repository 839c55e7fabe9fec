import { describe, expect, it } from 'vitest';
import type { ServicePolicyRecord } from '#shared/entities/policies.ts';
import type { PostureCheck } from '#shared/entities/posture-check.ts';
import { policyPostureQueriesView, postureQueryView } from '#shared/views/client-service-view.ts';

const common = {
  id: 'pc-1',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-02T00:00:00.000Z',
  tags: {},
  name: 'check',
  roleAttributes: [],
  checkVersion: 1,
};
const failing = { isPassing: false, timeout: -1, timeoutRemaining: -1 };
const passing = { isPassing: true, timeout: -1, timeoutRemaining: -1 };

describe('postureQueryView', () => {
  it('shows each process of a multi-process check by OS and path, never its hashes or signers', () => {
    const check: PostureCheck = {
      ...common,
      typeId: 'PROCESS_MULTI',
      semantic: 'AllOf',
      processes: [
        { osType: 'Windows', path: 'C:\\a.exe', hashes: ['ab'], signerFingerprints: ['cd'] },
        { osType: 'macOS', path: '/b', hashes: [], signerFingerprints: [] },
      ],
    };
    expect(postureQueryView(check, failing)).toEqual({
      id: 'pc-1',
      createdAt: common.createdAt,
      updatedAt: common.updatedAt,
      tags: {},
      _links: { self: { href: './posture-checks/pc-1' } },
      queryType: 'PROCESS_MULTI',
      isPassing: false,
      timeout: -1,
      timeoutRemaining: -1,
      processes: [
        { osType: 'Windows', path: 'C:\\a.exe' },
        { osType: 'macOS', path: '/b' },
      ],
    });
  });

  it('shows an OS check by its type alone', () => {
    const check: PostureCheck = { ...common, typeId: 'OS', operatingSystems: [{ type: 'Linux', versions: ['>=5'] }] };
    const view = postureQueryView(check, passing);
    expect(view).toMatchObject({ queryType: 'OS', isPassing: true });
    expect(view).not.toHaveProperty('operatingSystems');
    expect(view).not.toHaveProperty('process');
  });
});

describe('policyPostureQueriesView', () => {
  it('passes when every check of the policy passes, and when it has none', () => {
    const policy: ServicePolicyRecord = {
      id: 'sp-1',
      semantic: 'AllOf',
      type: 'Dial',
      identityRoles: [],
      serviceRoles: [],
      postureCheckRoles: [],
    };
    const check: PostureCheck = { ...common, typeId: 'DOMAIN', domains: ['x'] };
    expect(policyPostureQueriesView(policy, [])).toMatchObject({
      policyId: 'sp-1',
      policyType: 'Dial',
      isPassing: true,
    });
    expect(policyPostureQueriesView(policy, [{ check, state: passing }]).isPassing).toBe(true);
    const mixed = policyPostureQueriesView(policy, [
      { check, state: passing },
      { check: { ...check, id: 'pc-2' }, state: failing },
    ]);
    expect(mixed.isPassing).toBe(false);
    expect(mixed.postureQueries.map((query) => query.id)).toEqual(['pc-1', 'pc-2']);
  });
});
