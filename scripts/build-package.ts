/**
 * Builds the construct package: `ZitiController` (cdk/index.ts) as JavaScript with its type declarations, and every
 * function's bundle built ahead, so that another CDK app synthesises the controller from `node_modules` with neither
 * this repository's TypeScript sources (Node does not strip types under node_modules) nor esbuild.
 *
 *   node scripts/build-package.ts [out directory, default dist/package]   (`npm run package`)
 *
 * The output is a package directory: `npm pack` it, or install it by path.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ROUTES } from '#shared/routes/route-table.ts';
import { BUILD_STAMP_GLOBAL, buildStampDefine, repositoryBuildStamp } from '../cdk/build-stamp.ts';
import { functionBuildOptions, REQUIRE_BANNER } from '../cdk/function-bundle.ts';
import { functionSources } from '../cdk/operation-groups.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where the package keeps the function bundles, relative to its `index.js` (cdk/controller-function.ts reads it). */
const FUNCTIONS_DIRECTORY = './functions';
/** The oldest Node the package's own module runs on: a CDK app's, not Lambda's. */
const LIBRARY_TARGET = 'node20';

const rootPackage = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  version: string;
  license: string;
  devDependencies: Record<string, string>;
};

/** The package's manifest: one entry point, its types, and the CDK libraries the app brings (peers). */
function packageJson(stamp: ReturnType<typeof repositoryBuildStamp>) {
  return {
    name: 'ziti-serverless-controller',
    version: rootPackage.version,
    description: 'A serverless, OpenZiti Edge API compatible network controller as an AWS CDK construct',
    license: rootPackage.license,
    type: 'module',
    exports: {
      '.': { types: './types/cdk/index.d.ts', default: './index.js' },
      './package.json': './package.json',
    },
    // The declarations import each other as the sources do (`#shared/….ts`); only TypeScript resolves these.
    imports: { '#shared/*.ts': { types: './types/shared/*.d.ts' } },
    files: ['index.js', 'types', 'functions', 'README.md'],
    engines: { node: '>=20' },
    peerDependencies: {
      'aws-cdk-lib': `^${rootPackage.devDependencies['aws-cdk-lib']}`,
      constructs: `^${rootPackage.devDependencies.constructs}`,
    },
    zitiBuild: stamp,
  };
}

function readme(stamp: ReturnType<typeof repositoryBuildStamp>): string {
  return `# ziti-serverless-controller ${stamp.version}

A serverless, OpenZiti Edge API compatible network controller (API Gateway, Lambda, DynamoDB, KMS, Step Functions) as
an AWS CDK construct. Built from revision ${stamp.revision} (${stamp.buildDate}); the functions are bundled inside.

\`\`\`ts
import { App, Stack } from 'aws-cdk-lib';
import { ZitiController } from 'ziti-serverless-controller';

const app = new App();
const stack = new Stack(app, 'Ziti-dev');
new ZitiController(stack, 'Controller', { environment: 'dev', alarmEmail: 'ops@example.com' });
\`\`\`

One controller per stack. The props, their defaults and the deployment, upgrade and restore notes are in the
repository's docs/aws.md ("Deploying to AWS") and docs/aws-operations.md.
`;
}

export async function buildPackage(outDirectory: string): Promise<void> {
  const out = resolve(outDirectory);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const stamp = repositoryBuildStamp();

  // esbuild builds them side by side in its own process, exactly as a synth from the sources does (index.mjs and
  // the chunks its operations load lazily; the AWS SDK is the runtime's).
  await Promise.all(
    functionSources(ROUTES).map((source) =>
      build(functionBuildOptions(source, join(out, FUNCTIONS_DIRECTORY, source), buildStampDefine(stamp))),
    ),
  );

  await build({
    entryPoints: [join(REPO_ROOT, 'cdk', 'index.ts')],
    outfile: join(out, 'index.js'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: LIBRARY_TARGET,
    // The app's own CDK: one construct tree, one version of each library.
    external: ['aws-cdk-lib', 'aws-cdk-lib/*', 'constructs'],
    banner: { js: REQUIRE_BANNER },
    keepNames: true,
    define: {
      ...buildStampDefine(stamp),
      ZITI_PREBUILT_FUNCTIONS: JSON.stringify(FUNCTIONS_DIRECTORY),
    },
    tsconfig: join(REPO_ROOT, 'tsconfig.json'),
    logLevel: 'warning',
  });

  execFileSync(
    process.execPath,
    [
      join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      join(REPO_ROOT, 'tsconfig.package.json'),
      '--outDir',
      join(out, 'types'),
    ],
    { cwd: REPO_ROOT, stdio: 'inherit' },
  );

  writeFileSync(join(out, 'package.json'), `${JSON.stringify(packageJson(stamp), undefined, 2)}\n`);
  writeFileSync(join(out, 'README.md'), readme(stamp));
  console.log(
    `${out}: ziti-serverless-controller ${stamp.version} (${stamp.revision}, ${stamp.buildDate}); ${BUILD_STAMP_GLOBAL} stamped`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await buildPackage(process.argv[2] ?? join(REPO_ROOT, 'dist', 'package'));
}
