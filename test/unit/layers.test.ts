import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

/** The import-boundary check `npm test` runs (`npm run layers`), with its exit status and report. */
async function layers(): Promise<{ ok: boolean; report: string }> {
  try {
    const { stdout } = await run('npx', [
      'depcruise',
      '--config',
      '.dependency-cruiser.cjs',
      '--output-type',
      'err-long',
      'shared',
      'functions',
    ]);
    return { ok: true, report: stdout };
  } catch (error) {
    return { ok: false, report: String((error as { stdout?: string }).stdout) };
  }
}

describe('the layers of shared/', () => {
  it('hold today, and a wrong arrow fails with a message that says which layer may import which', async () => {
    expect((await layers()).ok).toBe(true);

    // A store module reaching up into the HTTP plumbing, written for the check and removed after.
    const probe = `shared/store/layer-probe-${process.pid}.ts`;
    writeFileSync(probe, "import { ok } from '../http/envelope.ts';\nexport const probe = ok;\n");
    try {
      const { ok, report } = await layers();
      expect(ok).toBe(false);
      expect(report).toContain('store-imports-only-below');
      expect(report).toContain(`${probe} → shared/http/envelope.ts`);
      expect(report.replace(/\s+/g, ' ')).toContain('may import only from itself and below (foundation, model)');
    } finally {
      rmSync(probe, { force: true });
    }
  }, 60_000);

  it('keep the DynamoDB client in the store: a domain module importing it fails the check', async () => {
    const probe = `shared/policy/dynamodb-probe-${process.pid}.ts`;
    writeFileSync(probe, "import { GetCommand } from '@aws-sdk/lib-dynamodb';\nexport const probe = GetCommand;\n");
    try {
      const { ok, report } = await layers();
      expect(ok).toBe(false);
      expect(report).toContain('only-the-store-talks-to-dynamodb');
      expect(report).toContain(probe);
    } finally {
      rmSync(probe, { force: true });
    }
  }, 60_000);

  it('keep DynamoDB expressions in the store: no module outside shared/store writes one', () => {
    const outside = ['shared', 'functions'].flatMap((root) =>
      (readdirSync(root, { recursive: true }) as string[])
        .filter((path) => path.endsWith('.ts'))
        .map((path) => join(root, path))
        .filter((path) => !path.startsWith(join('shared', 'store'))),
    );
    expect(outside.length).toBeGreaterThan(100);
    const withExpressions = outside.filter((path) => /\b\w*Expression\w*\s*:/.test(readFileSync(path, 'utf8')));
    expect(withExpressions).toEqual([]);
  });
});
