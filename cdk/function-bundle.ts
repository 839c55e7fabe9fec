import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import { Code } from 'aws-cdk-lib/aws-lambda';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * ESM bundles still hold CommonJS dependencies that call `require`; ESM has none, so define one. The alias keeps
 * the banner's import from clashing with a bundled `createRequire`.
 */
export const REQUIRE_BANNER =
  "import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);";

/**
 * What a function bundle leaves to the Lambda runtime: the AWS SDK for JavaScript v3, which the nodejs24.x runtime
 * ships (docs/performance.md, "Bundles": why the runtime's copy rather than a pinned one). Everything else is bundled.
 */
export const RUNTIME_PROVIDED_MODULES = ['@aws-sdk/*'] as const;

/**
 * The esbuild settings every function bundle shares, for a build that writes one file (`outfile`): the same output
 * without the chunks (what is imported lazily is then inlined). {@link functionBuildOptions} is the full build.
 */
export const FUNCTION_BUNDLE = {
  format: 'esm',
  platform: 'node',
  target: 'node24',
  mainFields: ['module', 'main'],
  external: [...RUNTIME_PROVIDED_MODULES],
  minify: true,
  // Minified class names would make logged error names and `constructor.name` checks useless.
  keepNames: true,
  sourcemap: true,
  // Stack traces need only the mappings; the sources would double the upload for nothing.
  sourcesContent: false,
} as const;

/** The entry of a function: `functions/<source>/handler.ts`, exporting `handler`. */
export function functionEntry(source: string): string {
  return join(REPO_ROOT, 'functions', source, 'handler.ts');
}

/**
 * The esbuild options of every function bundle: the synth (ControllerFunction), the benchmark and the bundle budget
 * test build with exactly these. `index.mjs` is the handler's module; code only some operations need (X.509, TOTP, QR
 * codes, JSON Schema, the API documents, the X-Ray tracer) is loaded with `await import()` and split into chunks of
 * its own (`chunks/`), which a cold start does not read until a request needs them.
 */
export function functionBuildOptions(source: string, outdir: string, define: Readonly<Record<string, string>> = {}) {
  // No esbuild type in this module's declarations: the construct package ships them to apps without esbuild.
  return {
    absWorkingDir: REPO_ROOT,
    entryPoints: { index: functionEntry(source) },
    outdir,
    ...FUNCTION_BUNDLE,
    mainFields: [...FUNCTION_BUNDLE.mainFields],
    external: [...FUNCTION_BUNDLE.external],
    bundle: true,
    splitting: true,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    banner: { js: REQUIRE_BANNER },
    tsconfig: join(REPO_ROOT, 'tsconfig.json'),
    define: { ...define },
    metafile: true as const,
    logLevel: 'warning' as const,
  };
}

/**
 * The code of a function: bundled on this machine at synth with {@link functionBuildOptions} (esbuild's JavaScript API
 * is loaded only here, so a synth from prebuilt bundles does not need it). The asset is hashed by its output.
 */
export function bundledFunctionCode(source: string, define: Readonly<Record<string, string>>): Code {
  return Code.fromAsset(join(REPO_ROOT, 'functions', source), {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never used: local bundling always succeeds or throws.
      image: DockerImage.fromRegistry('scratch'),
      local: {
        tryBundle(outputDir) {
          const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
          esbuild.buildSync(functionBuildOptions(source, outputDir, define));
          return true;
        },
      },
    },
  });
}
