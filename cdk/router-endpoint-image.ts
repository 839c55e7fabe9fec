import { copyFileSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Stack } from 'aws-cdk-lib';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import { ContainerImage } from 'aws-cdk-lib/aws-ecs';
import type { Construct } from 'constructs';
import { FUNCTION_BUNDLE, REQUIRE_BANNER } from './function-bundle.ts';

/** Set when the construct package is built (`controller-function.ts` says how); unset in this repository. */
declare const ZITI_PREBUILT_FUNCTIONS: string | undefined;

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The Dockerfile, alone in its directory: the image's build context is it and the bundle, never the repository. */
const IMAGE_DIRECTORY = join(REPO_ROOT, 'ctrl-channel', 'image');

/**
 * The esbuild options of the endpoint's bundle: the functions' settings (`function-bundle.ts`) in one file, with the
 * AWS SDK inside, as no runtime provides it in a container.
 */
export function routerEndpointBuildOptions(outfile: string, define: Readonly<Record<string, string>> = {}) {
  return {
    absWorkingDir: REPO_ROOT,
    entryPoints: [join(REPO_ROOT, 'ctrl-channel', 'main.ts')],
    outfile,
    ...FUNCTION_BUNDLE,
    mainFields: [...FUNCTION_BUNDLE.mainFields],
    external: [],
    bundle: true,
    banner: { js: REQUIRE_BANNER },
    tsconfig: join(REPO_ROOT, 'tsconfig.json'),
    define: { ...define },
    logLevel: 'warning' as const,
  };
}

/**
 * The endpoint's container image: the entry point bundled on this machine at synth, beside the Dockerfile, which the
 * CDK CLI builds (arm64) and pushes at deploy. A synth that skips bundling (`aws:cdk:bundling-stacks`, as the tests
 * set it) stages the Dockerfile alone: nothing runs Docker at synth either way.
 */
export function routerEndpointImage(scope: Construct, define: Readonly<Record<string, string>>): ContainerImage {
  if (typeof ZITI_PREBUILT_FUNCTIONS === 'string') {
    throw new Error(
      "routerEndpoint: the construct package does not ship the routers' endpoint image yet; deploy it from the repository",
    );
  }
  let directory = IMAGE_DIRECTORY;
  if (Stack.of(scope).bundlingRequired) {
    directory = mkdtempSync(join(tmpdir(), 'ziti-router-endpoint-'));
    const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
    esbuild.buildSync(routerEndpointBuildOptions(join(directory, 'index.mjs'), define));
    copyFileSync(join(IMAGE_DIRECTORY, 'Dockerfile'), join(directory, 'Dockerfile'));
  }
  return ContainerImage.fromAsset(directory, { platform: Platform.LINUX_ARM64 });
}
