import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { ControllerFunction } from '../../cdk/controller-function.ts';
import { cdkJsonContext } from './synth-context.ts';

describe('ControllerFunction bundling', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'controller-function-'));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  // A real esbuild bundle plus a Node start: about 20 s on a loaded two-core machine.
  it('bundles a handler into one ESM file that Node 24 loads without node_modules', { timeout: 120_000 }, () => {
    const app = new App({ outdir, context: cdkJsonContext() });
    const stack = new Stack(app, 'Bundled');
    new ControllerFunction(stack, 'Info', { source: 'info', description: 'bundling test' });
    app.synth();

    const assets = readdirSync(outdir).filter((entry) => entry.startsWith('asset.'));
    expect(assets).toHaveLength(1);
    const bundle = join(outdir, assets[0]!, 'index.mjs');
    expect(existsSync(`${bundle}.map`)).toBe(true);
    expect(readFileSync(bundle, 'utf8')).toMatch(/^import \{ createRequire as \w+ \} from 'node:module';/);

    // A child process, as Lambda would load it: vitest's own module loader must not stand in for Node's.
    const loaded = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(pathToFileURL(bundle).href)}); process.stdout.write(typeof m.handler);`,
      ],
      {
        cwd: outdir,
        env: { PATH: process.env.PATH, TABLE_NAME: 'bundling-test', AWS_REGION: 'us-east-1' },
        encoding: 'utf8',
      },
    );
    expect(loaded).toBe('function');
  });
});
