import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** What a build says about itself: `/version` reports it, and every resource is tagged with the version. */
export interface BuildStamp {
  /** `v` and the package version (`v0.1.0`), as the reference controller writes its own. */
  readonly version: string;
  /** The git commit (12 hex digits, as the reference's), with `-dirty` when the work tree had uncommitted changes. */
  readonly revision: string;
  /** ISO 8601 in UTC, to the second. */
  readonly buildDate: string;
}

/**
 * The global the function bundles read the stamp from (`shared/config.ts`): esbuild replaces it with the stamp's JSON
 * at synth (`define`). The construct package's own bundle carries it too, stamped when the package was built.
 */
export const BUILD_STAMP_GLOBAL = 'ZITI_BUILD_STAMP';

declare const ZITI_BUILD_STAMP: BuildStamp | undefined;

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

function git(args: readonly string[]): string | undefined {
  try {
    return execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

const isoSeconds = (date: Date) => `${date.toISOString().slice(0, 19)}Z`;

/**
 * The stamp of the sources in this repository. The date is the commit's (or `SOURCE_DATE_EPOCH`), not the clock's, so
 * the same commit always builds the same bundles: a redeploy of an unchanged revision changes no function and
 * publishes no Lambda version. Uncommitted changes have no commit date: such a build is `-dirty` and dated now.
 */
export function repositoryBuildStamp(env: NodeJS.ProcessEnv = process.env, now: Date = new Date()): BuildStamp {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  const commit = git(['rev-parse', '--short=12', 'HEAD']);
  const dirty = commit !== undefined && git(['status', '--porcelain', '--untracked-files=no']) !== '';
  const epoch = Number(env.SOURCE_DATE_EPOCH);
  const commitDate = git(['log', '-1', '--format=%cI']);
  const date =
    env.SOURCE_DATE_EPOCH && Number.isInteger(epoch)
      ? new Date(epoch * 1000)
      : commitDate && !dirty
        ? new Date(commitDate)
        : now;
  return {
    version: `v${version}`,
    revision: commit === undefined ? 'unknown' : `${commit}${dirty ? '-dirty' : ''}`,
    buildDate: isoSeconds(date),
  };
}

/**
 * The stamp this code was built with: the one the construct package was stamped with when it was built, else the
 * repository's (`repositoryBuildStamp`), read when the app synthesises.
 */
export function currentBuildStamp(): BuildStamp {
  return typeof ZITI_BUILD_STAMP === 'object' && ZITI_BUILD_STAMP !== null ? ZITI_BUILD_STAMP : repositoryBuildStamp();
}

/** esbuild's `define` that puts the stamp into a bundle. */
export function buildStampDefine(stamp: BuildStamp): Record<string, string> {
  return { [BUILD_STAMP_GLOBAL]: JSON.stringify(stamp) };
}
