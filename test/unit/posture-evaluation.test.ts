import { describe, expect, it } from 'vitest';
import { applyResponses } from '#functions/sessions/posture-responses.ts';
import type { PostureCheck } from '#shared/entities/posture-check.ts';
import { EMPTY_POSTURE_DATA, MAX_PROCESSES, type PostureData } from '#shared/posture/posture-data.ts';
import { checkPasses, evaluateCheck } from '#shared/posture/posture-evaluation.ts';
import { parseSemVer, parseSemVerRange } from '#shared/posture/semver.ts';

const NOW = new Date('2026-01-01T12:00:00.000Z');
const ago = (seconds: number) => new Date(NOW.getTime() - seconds * 1000).toISOString();
const base = {
  createdAt: NOW.toISOString(),
  updatedAt: NOW.toISOString(),
  tags: {},
  name: 'check',
  roleAttributes: [],
  checkVersion: 1,
};
const data = (extra: Partial<PostureData>): PostureData => ({ ...EMPTY_POSTURE_DATA, ...extra });
const at = ago(1);

describe('semantic versions as the reference compares them', () => {
  it('accepts only full versions', () => {
    expect(parseSemVer('10.5.19041')).toEqual({ major: 10, minor: 5, patch: 19041, pre: [] });
    expect(parseSemVer('1.2.3-beta.1+build.5')).toEqual({ major: 1, minor: 2, patch: 3, pre: ['beta', 1] });
    for (const partial of ['10', '10.5', '10.', '10.5.', '', 'x.y.z', '01.2.3'])
      expect(parseSemVer(partial)).toBe(undefined);
  });

  it('evaluates ranges with AND, OR, operators and wildcards', () => {
    const v = (text: string) => parseSemVer(text) as NonNullable<ReturnType<typeof parseSemVer>>;
    const inRange = (range: string, version: string) => parseSemVerRange(range)?.(v(version));
    expect(inRange('>=10.5.0 <=10.6.0', '10.5.19041')).toBe(true);
    expect(inRange('>=10.5.19042', '10.5.19041')).toBe(false);
    expect(inRange('>10.6.0', '10.5.19041')).toBe(false);
    expect(inRange('10.5.19041', '10.5.19041')).toBe(true);
    expect(inRange('<1.0.0 || >=2.0.0', '2.1.0')).toBe(true);
    expect(inRange('<1.0.0 || >=2.0.0', '1.1.0')).toBe(false);
    expect(inRange('1.2.x', '1.2.9')).toBe(true);
    expect(inRange('1.2.x', '1.3.0')).toBe(false);
    expect(inRange('>= 1.0.0', '1.0.0')).toBe(true);
    expect(inRange('1.0.0-alpha', '1.0.0')).toBe(false);
    expect(parseSemVerRange('not a range')).toBe(undefined);
  });
});

describe('posture checks', () => {
  it('DOMAIN: any listed domain, case-insensitively; nothing reported fails', () => {
    const check: PostureCheck = { ...base, id: 'd', typeId: 'DOMAIN', domains: ['corp.example'] };
    expect(checkPasses(check, EMPTY_POSTURE_DATA, NOW)).toBe(false);
    expect(
      checkPasses(check, data({ domain: { postureCheckId: 'd', name: 'CORP.example', lastUpdatedAt: at } }), NOW),
    ).toBe(true);
    expect(checkPasses(check, data({ domain: { postureCheckId: 'd', name: 'other', lastUpdatedAt: at } }), NOW)).toBe(
      false,
    );
  });

  it('MAC: any reported address in the list, compared as hex digits', () => {
    const check: PostureCheck = { ...base, id: 'm', typeId: 'MAC', macAddresses: ['AA:BB:CC:DD:EE:FF'] };
    const mac = (addresses: string[]) => data({ mac: { postureCheckId: 'm', addresses, lastUpdatedAt: at } });
    expect(checkPasses(check, mac(['001122334455', 'aabbccddeeff']), NOW)).toBe(true);
    expect(checkPasses(check, mac(['001122334455']), NOW)).toBe(false);
  });

  it('OS: the type case-insensitively, then any version range; no versions means any version', () => {
    const check: PostureCheck = {
      ...base,
      id: 'o',
      typeId: 'OS',
      operatingSystems: [
        { type: 'Windows', versions: ['>=10.0.0 <11.0.0'] },
        { type: 'Linux', versions: [] },
      ],
    };
    const os = (type: string, version: string) =>
      data({ os: { postureCheckId: 'o', type, version, build: '', lastUpdatedAt: at } });
    expect(checkPasses(check, os('windows', '10.0.19041'), NOW)).toBe(true);
    expect(checkPasses(check, os('Windows', '11.0.1'), NOW)).toBe(false);
    expect(checkPasses(check, os('Windows', '10.0'), NOW)).toBe(false);
    expect(checkPasses(check, os('Linux', 'anything'), NOW)).toBe(true);
    expect(checkPasses(check, os('macOS', '13.0.0'), NOW)).toBe(false);
  });

  const processReport = (extra: Partial<PostureData['processes'][number]> = {}) => ({
    postureCheckId: 'p',
    path: '/usr/bin/agent',
    isRunning: true,
    hash: 'abc123',
    signerFingerprints: ['ff00'],
    lastUpdatedAt: at,
    ...extra,
  });

  it('PROCESS: the report for this check, running, signed by the fingerprint, with one of the hashes', () => {
    const check: PostureCheck = {
      ...base,
      id: 'p',
      typeId: 'PROCESS',
      process: { osType: 'Linux', path: '/usr/bin/agent', hashes: ['ABC123'], signerFingerprint: 'FF:00' },
    };
    expect(checkPasses(check, data({ processes: [processReport()] }), NOW)).toBe(true);
    expect(checkPasses(check, data({ processes: [processReport({ isRunning: false })] }), NOW)).toBe(false);
    expect(checkPasses(check, data({ processes: [processReport({ hash: 'def' })] }), NOW)).toBe(false);
    expect(checkPasses(check, data({ processes: [processReport({ signerFingerprints: [] })] }), NOW)).toBe(false);
    expect(checkPasses(check, data({ processes: [processReport({ postureCheckId: 'other' })] }), NOW)).toBe(false);
  });

  it('PROCESS_MULTI: every (AllOf) or any (AnyOf) process, by path', () => {
    const processes = [
      { osType: 'Linux' as const, path: '/a', hashes: [], signerFingerprints: [] },
      { osType: 'Linux' as const, path: '/b', hashes: ['abc123'], signerFingerprints: ['ff00', '1234'] },
    ];
    const allOf: PostureCheck = { ...base, id: 'pm', typeId: 'PROCESS_MULTI', semantic: 'AllOf', processes };
    const anyOf: PostureCheck = { ...allOf, semantic: 'AnyOf' };
    const onlyA = data({ processPaths: [processReport({ path: '/a', hash: 'zzz' })] });
    const both = data({ processPaths: [processReport({ path: '/a' }), processReport({ path: '/b' })] });
    expect(checkPasses(allOf, onlyA, NOW)).toBe(false);
    expect(checkPasses(anyOf, onlyA, NOW)).toBe(true);
    expect(checkPasses(allOf, both, NOW)).toBe(true);
    expect(checkPasses(anyOf, EMPTY_POSTURE_DATA, NOW)).toBe(false);
  });

  describe('MFA', () => {
    const mfa = (extra: Partial<Extract<PostureCheck, { typeId: 'MFA' }>> = {}): PostureCheck => ({
      ...base,
      id: 'mfa',
      typeId: 'MFA',
      timeoutSeconds: -1,
      promptOnWake: false,
      promptOnUnlock: false,
      ignoreLegacyEndpoints: false,
      ...extra,
    });

    it('fails without an MFA pass on the API session, passes with one', () => {
      expect(evaluateCheck(mfa(), EMPTY_POSTURE_DATA, NOW)).toEqual({
        isPassing: false,
        timeout: -1,
        timeoutRemaining: -1,
      });
      expect(evaluateCheck(mfa(), data({ mfa: { passedAt: ago(10_000) } }), NOW).isPassing).toBe(true);
    });

    it('times out timeoutSeconds after the pass, counting down timeoutRemaining', () => {
      const check = mfa({ timeoutSeconds: 600 });
      expect(evaluateCheck(check, data({ mfa: { passedAt: ago(100) } }), NOW)).toEqual({
        isPassing: true,
        timeout: 600,
        timeoutRemaining: 500,
      });
      expect(evaluateCheck(check, data({ mfa: { passedAt: ago(700) } }), NOW)).toEqual({
        isPassing: false,
        timeout: 600,
        timeoutRemaining: 0,
      });
      expect(evaluateCheck(check, EMPTY_POSTURE_DATA, NOW).timeoutRemaining).toBe(0);
    });

    it('promptOnWake / promptOnUnlock: a wake after the pass fails once the 5 minute grace period is over', () => {
      const check = mfa({ promptOnWake: true, timeoutSeconds: 3600 });
      const woke = (wokenAgo: number) =>
        data({ mfa: { passedAt: ago(1000) }, endpointState: { wokenAt: ago(wokenAgo) } });
      expect(evaluateCheck(check, woke(60), NOW)).toEqual({ isPassing: true, timeout: 3600, timeoutRemaining: 240 });
      expect(evaluateCheck(check, woke(400), NOW).isPassing).toBe(false);
      // A wake before the pass is answered by it.
      expect(checkPasses(check, woke(2000), NOW)).toBe(true);
      const unlock = mfa({ promptOnUnlock: true });
      const unlocked = data({ mfa: { passedAt: ago(1000) }, endpointState: { unlockedAt: ago(400) } });
      expect(checkPasses(unlock, unlocked, NOW)).toBe(false);
      expect(checkPasses(mfa(), unlocked, NOW)).toBe(true);
    });
  });
});

describe('posture responses applied to the stored data', () => {
  const at = NOW.toISOString();

  it('cleans hex values, keeps one report per check and per path, and merges endpoint state', () => {
    let data = applyResponses(
      EMPTY_POSTURE_DATA,
      [
        { typeId: 'MAC', id: 'm', macAddresses: ['AA:BB:CC:DD:EE:FF'] },
        { typeId: 'PROCESS', id: 'p', path: '/a', isRunning: true, hash: 'AB-CD', signerFingerprints: ['FF:00'] },
        { typeId: 'ENDPOINT_STATE', id: 's', woken: true },
      ],
      at,
    );
    expect(data.mac?.addresses).toEqual(['aabbccddeeff']);
    expect(data.processes).toEqual([
      expect.objectContaining({ postureCheckId: 'p', hash: 'abcd', signerFingerprints: ['ff00'] }),
    ]);
    data = applyResponses(
      data,
      [
        { typeId: 'PROCESS', id: 'p', path: '/b', isRunning: false },
        { typeId: 'ENDPOINT_STATE', id: 's', unlocked: true },
      ],
      ago(-5),
    );
    expect(data.processes).toEqual([expect.objectContaining({ path: '/b', isRunning: false })]);
    expect(data.processPaths.map((report) => report.path)).toEqual(['/a', '/b']);
    expect(data.endpointState).toEqual({ wokenAt: at, unlockedAt: ago(-5) });
  });

  it('keeps at most MAX_PROCESSES reports', () => {
    const responses = Array.from({ length: MAX_PROCESSES + 10 }, (_, i) => ({
      typeId: 'PROCESS' as const,
      id: `p${i}`,
      path: `/p${i}`,
      isRunning: true,
    }));
    const data = applyResponses(EMPTY_POSTURE_DATA, responses, at);
    expect(data.processes).toHaveLength(MAX_PROCESSES);
    expect(data.processPaths).toHaveLength(MAX_PROCESSES);
    expect(data.processes[0]?.postureCheckId).toBe('p10');
  });
});
