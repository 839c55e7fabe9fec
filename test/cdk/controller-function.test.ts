import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { ControllerFunction } from '../../cdk/controller-function.ts';
import { NO_TABLE_ENVIRONMENT, proxyEvent } from '../support/lambda-event.ts';
import { cdkJsonContext } from './synth-context.ts';

const STAMP = { version: 'v9.8.7', revision: 'abcdef123456', buildDate: '2026-01-02T03:04:05Z' };

describe('ControllerFunction bundling', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'controller-function-'));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  // A real esbuild bundle plus a Node start: about 20 s on a loaded two-core machine.
  it("bundles a handler that Node 24 loads with only the runtime's AWS SDK beside it, stamped with the build", {
    timeout: 120_000,
  }, () => {
    const app = new App({ outdir, context: cdkJsonContext() });
    const stack = new Stack(app, 'Bundled');
    new ControllerFunction(stack, 'Info', { source: 'info', description: 'bundling test', buildStamp: STAMP });
    app.synth();

    const assets = readdirSync(outdir).filter((entry) => entry.startsWith('asset.'));
    expect(assets).toHaveLength(1);
    const bundle = join(outdir, assets[0]!, 'index.mjs');
    expect(existsSync(`${bundle}.map`)).toBe(true);
    const code = readFileSync(bundle, 'utf8');
    expect(code).toMatch(/^import \{ createRequire as \w+ \} from 'node:module';/);
    // The AWS SDK is imported, not bundled: Lambda's nodejs24.x runtime provides it.
    expect(code).toMatch(/from"@aws-sdk\/client-dynamodb"/);
    // As in Lambda, where the runtime's copy of the SDK is what `@aws-sdk/*` resolves to, and nothing else is there.
    mkdirSync(join(outdir, 'node_modules'));
    symlinkSync(
      fileURLToPath(new URL('../../node_modules/@aws-sdk', import.meta.url)),
      join(outdir, 'node_modules', '@aws-sdk'),
      'dir',
    );

    // A child process, as Lambda would load it: vitest's own module loader must not stand in for Node's. It asks the
    // bundled handler for GET /version, which reports the stamp esbuild defined into the bundle.
    const event = proxyEvent('GET', '/edge/client/v1/version');
    const answered = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(pathToFileURL(bundle).href)});
         const answer = await m.handler(${JSON.stringify(event)}, { awsRequestId: 'r', getRemainingTimeInMillis: () => 10000 });
         process.stdout.write(JSON.stringify({ type: typeof m.handler, answer }));`,
      ],
      { cwd: outdir, env: { PATH: process.env.PATH, ...NO_TABLE_ENVIRONMENT }, encoding: 'utf8' },
    );
    const { type, answer } = JSON.parse(answered) as { type: string; answer: { statusCode: number; body: string } };
    expect(type).toBe('function');
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body).data).toMatchObject(STAMP);
  });
});
