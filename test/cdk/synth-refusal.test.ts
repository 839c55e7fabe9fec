import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `cdk synth` as an operator runs it, without the domains SDKs need: the CLI stops before anything is built, with the
 * one message naming what to set (`sdkReadinessProblem`). Nothing is bundled, so this takes seconds.
 */

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'synth-refusal-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** The environment without any ZITI_* setting of the machine's, which the app would read. */
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('ZITI_')));

describe('cdk synth without the domains SDKs need', () => {
  it('fails with the message naming the settings and the opt-in', async () => {
    const failure = await promisify(execFile)('npx', ['cdk', 'synth', '--quiet', '--output', out], {
      cwd: REPO_ROOT,
      env: cleanEnv,
    }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failure?.code).not.toBe(0);
    expect(failure?.stderr).toContain(
      'Error: SDKs cannot use this deployment: set domainName, mtlsDomainName, sdkDomainName',
    );
    expect(failure?.stderr).toContain('set managementOnly=true');
  }, 120_000);
});
