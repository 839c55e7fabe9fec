import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Whether this checkout is a release: `npm run release:check`, before a deploy that should be one, or after tagging
 * one (docs/aws-operations.md, "Releases"). A release is the commit an annotated tag `v<package.json version>` names,
 * with the CHANGELOG's section for that version and no uncommitted change: what the stack's `Version` output and
 * `/version` then report (`v<version> <revision>`) is a tag an operator can check out again to roll back to.
 */

/** What the check reads from the checkout. */
export interface ReleaseFacts {
  /** `package.json`'s version. */
  readonly version: string;
  /** CHANGELOG.md. */
  readonly changelog: string;
  /** The tags naming HEAD (`git tag --points-at HEAD`). */
  readonly tagsAtHead: readonly string[];
  /** Whether the tag `v<version>` is annotated (`git cat-file -t` says `tag`), if it exists. */
  readonly annotated: boolean;
  /** Whether tracked files have uncommitted changes. */
  readonly dirty: boolean;
}

const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;

/** Why the checkout is not the release its version names; empty when it is. */
export function releaseProblems(facts: ReleaseFacts): string[] {
  const { version, changelog, tagsAtHead, annotated, dirty } = facts;
  const tag = `v${version}`;
  const problems: string[] = [];
  if (!SEMVER.test(version)) problems.push(`package.json's version ${JSON.stringify(version)} is not X.Y.Z`);
  const escaped = version.replace(/[.]/g, '\\.');
  if (!new RegExp(`^## \\[${escaped}\\]`, 'm').test(changelog)) {
    problems.push(`CHANGELOG.md has no "## [${version}]" section (move [Unreleased] under it)`);
  }
  if (!tagsAtHead.includes(tag)) {
    problems.push(
      tagsAtHead.length > 0
        ? `HEAD is tagged ${tagsAtHead.join(', ')}, not ${tag}`
        : `HEAD is not tagged ${tag} (git tag -a ${tag} -m "${tag}")`,
    );
  } else if (!annotated) {
    problems.push(`${tag} is a lightweight tag: make it annotated (git tag -a)`);
  }
  if (dirty) problems.push('the work tree has uncommitted changes: the stack would report the revision -dirty');
  return problems;
}

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const git = (args: readonly string[]) =>
  execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();

/** The facts of this checkout. */
export function checkoutFacts(): ReleaseFacts {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  const tagsAtHead = git(['tag', '--points-at', 'HEAD']).split('\n').filter(Boolean);
  let annotated = false;
  try {
    annotated = git(['cat-file', '-t', `refs/tags/v${version}`]) === 'tag';
  } catch {
    // No such tag: reported as missing.
  }
  return {
    version,
    changelog: readFileSync(new URL('../CHANGELOG.md', import.meta.url), 'utf8'),
    tagsAtHead,
    annotated,
    dirty: git(['status', '--porcelain', '--untracked-files=no']) !== '',
  };
}

if (import.meta.main) {
  const facts = checkoutFacts();
  const problems = releaseProblems(facts);
  if (problems.length > 0) {
    console.error(`not the release v${facts.version}:\n${problems.map((problem) => `- ${problem}`).join('\n')}`);
    process.exit(1);
  }
  console.log(`release v${facts.version} at ${git(['rev-parse', '--short=12', 'HEAD'])}`);
}
