import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { ROUTES } from '#shared/routes/route-table.ts';
import { functionBuildOptions } from '../cdk/function-bundle.ts';
import { functionSources } from '../cdk/operation-groups.ts';
import { percentile } from './percentile.ts';

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The goal of issue 21: what a cold start reads of a function's bundle, minified. */
export const BUNDLE_BUDGET_BYTES = 300_000;

/** Imports the bundle named by BENCH_BUNDLE_URL and prints how long the import took. */
const IMPORT_TIMER =
  'const t = performance.now(); await import(process.env.BENCH_BUNDLE_URL); process.stdout.write(String(performance.now() - t));';

/** Every function the stack deploys (`functionSources`). */
export function functionNames(): string[] {
  return functionSources(ROUTES);
}

export interface BundleSizes {
  readonly functionName: string;
  /** `index.mjs` and the chunks it imports statically: what a cold start loads, minified. */
  readonly bytes: number;
  readonly gzipBytes: number;
  /** Every file of the bundle, the chunks only some operations load included. */
  readonly totalBytes: number;
  readonly sourceMapBytes: number;
  /** The largest packages of the cold-start set, by their bytes in it (`shared/…` for our own code). */
  readonly largest: readonly (readonly [string, number])[];
  /** The runtime's modules (the AWS SDK's) the cold-start set imports: each costs its own import time at init. */
  readonly runtimeModules: readonly string[];
}

export interface BundleFigures extends BundleSizes {
  /** Median of the cold imports, each in a fresh `node`. */
  readonly coldImportMs: number;
  /** The same with `--enable-source-maps`, which the functions run with. */
  readonly coldImportWithSourceMapsMs: number;
  /** The same in Lambda's environment (`AWS_EXECUTION_ENV`), where the X-Ray tracer loads too. */
  readonly coldImportTracedMs: number;
}

/** The output files a cold start reads: the entry and, transitively, the chunks it imports statically. */
function coldStartFiles(metafile: Metafile, entry: string): Set<string> {
  const files = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const imported of metafile.outputs[file]?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
    }
  };
  visit(entry);
  return files;
}

function packageOf(input: string): string {
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
  return inModules ? inModules[1]! : input.split('/').slice(0, 2).join('/');
}

/**
 * Bundles one function exactly as the synth does (`cdk/function-bundle.ts`) into `outDir/<name>` and measures it from
 * esbuild's metafile.
 */
export async function bundleFunction(functionName: string, outDir: string): Promise<BundleSizes> {
  const dir = join(outDir, functionName);
  const result = await build(functionBuildOptions(functionName, dir));
  const { outputs } = result.metafile;
  // Chunks that are targets of `import()` name an entry point too: the handler's module is `index.mjs`.
  const entry = Object.keys(outputs).find((file) => file.endsWith('/index.mjs'))!;
  const cold = coldStartFiles(result.metafile, entry);
  // Metafile paths are relative to the build's working directory, the repository.
  const contents = await Promise.all([...cold].map((file) => readFile(join(REPO_ROOT, file))));
  const byPackage = new Map<string, number>();
  for (const file of cold) {
    for (const [input, { bytesInOutput }] of Object.entries(outputs[file]!.inputs)) {
      byPackage.set(packageOf(input), (byPackage.get(packageOf(input)) ?? 0) + bytesInOutput);
    }
  }
  const files = Object.entries(outputs);
  const runtimeModules = new Set(
    [...cold]
      .flatMap((file) =>
        outputs[file]!.imports.filter((imported) => imported.external && imported.kind === 'import-statement'),
      )
      .map((imported) => imported.path)
      .filter((path) => !path.startsWith('node:')),
  );
  return {
    functionName,
    bytes: [...cold].reduce((sum, file) => sum + outputs[file]!.bytes, 0),
    gzipBytes: gzipSync(Buffer.concat(contents)).length,
    totalBytes: files.filter(([file]) => file.endsWith('.mjs')).reduce((sum, [, out]) => sum + out.bytes, 0),
    sourceMapBytes: files.filter(([file]) => file.endsWith('.map')).reduce((sum, [, out]) => sum + out.bytes, 0),
    runtimeModules: [...runtimeModules].sort(),
    largest: [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.BUNDLE_TOP ?? 6)),
  };
}

/**
 * Where the bundles can import the AWS SDK from, as they do from the Lambda runtime's copy: `node_modules/@aws-sdk`
 * beside them, pointing at this repository's (the SDK's own dependencies resolve from there).
 */
async function provideRuntimeSdk(outDir: string): Promise<void> {
  await mkdir(join(outDir, 'node_modules'), { recursive: true });
  await symlink(join(REPO_ROOT, 'node_modules', '@aws-sdk'), join(outDir, 'node_modules', '@aws-sdk'), 'dir');
}

async function importMs(file: string, nodeOptions: readonly string[], lambda: boolean): Promise<number> {
  const { stdout } = await run(process.execPath, [...nodeOptions, '--input-type=module', '-e', IMPORT_TIMER], {
    env: {
      PATH: process.env.PATH ?? '',
      BENCH_BUNDLE_URL: pathToFileURL(file).href,
      TABLE_NAME: 'bench',
      AWS_REGION: 'us-east-1',
      ...(lambda ? { AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x', AWS_LAMBDA_FUNCTION_NAME: 'bench' } : {}),
    },
  });
  return Number(stdout);
}

/** Median cold imports (plain, with source maps, in Lambda's environment), alternating so drift hits all alike. */
async function coldImports(file: string, runs: number) {
  const plain: number[] = [];
  const withSourceMaps: number[] = [];
  const traced: number[] = [];
  for (let i = 0; i < runs; i++) {
    plain.push(await importMs(file, [], false));
    withSourceMaps.push(await importMs(file, ['--enable-source-maps'], false));
    traced.push(await importMs(file, [], true));
  }
  return {
    plain: percentile(plain, 0.5),
    withSourceMaps: percentile(withSourceMaps, 0.5),
    traced: percentile(traced, 0.5),
  };
}

/** The part of every cold import that is the runtime's SDK: its DynamoDB clients alone, imported the same way. */
export interface SdkImportFigures {
  readonly coldImportMs: number;
}

/**
 * Bundles every function as the synth does, then times cold imports of each in fresh Node processes, and of the
 * runtime's DynamoDB clients alone (what every function imports from the SDK).
 */
export async function measureBundles(coldRuns = 5): Promise<{ bundles: BundleFigures[]; sdk: SdkImportFigures }> {
  const outDir = await mkdtemp(join(tmpdir(), 'ziti-bench-bundles-'));
  try {
    await provideRuntimeSdk(outDir);
    const sdkOnly = join(outDir, 'sdk-only.mjs');
    await writeFile(sdkOnly, "import '@aws-sdk/client-dynamodb'; import '@aws-sdk/lib-dynamodb';\n");
    const sdk = { coldImportMs: (await coldImports(sdkOnly, coldRuns)).plain };
    const figures: BundleFigures[] = [];
    for (const functionName of functionNames()) {
      const sizes = await bundleFunction(functionName, outDir);
      const cold = await coldImports(join(outDir, functionName, 'index.mjs'), coldRuns);
      figures.push({
        ...sizes,
        coldImportMs: cold.plain,
        coldImportWithSourceMapsMs: cold.withSourceMaps,
        coldImportTracedMs: cold.traced,
      });
    }
    return { bundles: figures, sdk };
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}
