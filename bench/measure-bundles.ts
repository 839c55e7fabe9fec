import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { ROUTES } from '#shared/routes/route-table.ts';
import { REQUIRE_BANNER } from '../cdk/controller-function.ts';
import { operationGroupsOf } from '../cdk/operation-groups.ts';
import { percentile } from './percentile.ts';

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Imports the bundle named by BENCH_BUNDLE_URL and prints how long the import took. */
const IMPORT_TIMER =
  'const t = performance.now(); await import(process.env.BENCH_BUNDLE_URL); process.stdout.write(String(performance.now() - t));';

export interface BundleFigures {
  readonly functionName: string;
  readonly bytes: number;
  readonly gzipBytes: number;
  readonly sourceMapBytes: number;
  /** Median of the cold imports, each in a fresh `node`. */
  readonly coldImportMs: number;
  /** The same with `--enable-source-maps`, which the functions run with. */
  readonly coldImportWithSourceMapsMs: number;
}

async function importMs(file: string, nodeOptions: readonly string[]): Promise<number> {
  const { stdout } = await run(process.execPath, [...nodeOptions, '--input-type=module', '-e', IMPORT_TIMER], {
    env: {
      PATH: process.env.PATH ?? '',
      BENCH_BUNDLE_URL: pathToFileURL(file).href,
      TABLE_NAME: 'bench',
      AWS_REGION: 'us-east-1',
    },
  });
  return Number(stdout);
}

/** Median cold imports without and with source maps, the two alternating so drift in the machine hits both alike. */
async function coldImports(file: string, runs: number): Promise<{ plain: number; withSourceMaps: number }> {
  const plain: number[] = [];
  const withSourceMaps: number[] = [];
  for (let i = 0; i < runs; i++) {
    plain.push(await importMs(file, []));
    withSourceMaps.push(await importMs(file, ['--enable-source-maps']));
  }
  return { plain: percentile(plain, 0.5), withSourceMaps: percentile(withSourceMaps, 0.5) };
}

/**
 * Bundles every function (`functions/<group>/handler.ts` for each route group, plus `bootstrap` and `integrity`) with the options
 * cdk/controller-function.ts gives esbuild, then times a cold import of each bundle in a fresh Node process.
 */
export async function measureBundles(coldRuns = 5): Promise<BundleFigures[]> {
  const outDir = await mkdtemp(join(tmpdir(), 'ziti-bench-bundles-'));
  try {
    const figures: BundleFigures[] = [];
    for (const functionName of [...operationGroupsOf(ROUTES), 'bootstrap', 'integrity']) {
      const outfile = join(outDir, functionName, 'index.mjs');
      await build({
        entryPoints: [join(REPO_ROOT, 'functions', functionName, 'handler.ts')],
        outfile,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node24',
        mainFields: ['module', 'main'],
        banner: { js: REQUIRE_BANNER },
        minify: true,
        keepNames: true,
        sourcemap: true,
        sourcesContent: false,
        tsconfig: join(REPO_ROOT, 'tsconfig.json'),
        logLevel: 'warning',
      });
      const code = await readFile(outfile);
      const map = await readFile(`${outfile}.map`);
      const cold = await coldImports(outfile, coldRuns);
      figures.push({
        functionName,
        bytes: code.length,
        gzipBytes: gzipSync(code).length,
        sourceMapBytes: map.length,
        coldImportMs: cold.plain,
        coldImportWithSourceMapsMs: cold.withSourceMaps,
      });
    }
    return figures;
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}
