import { describe, expect, it } from 'vitest';
import { type ReleaseFacts, releaseProblems } from '../../scripts/check-release.ts';

const RELEASE: ReleaseFacts = {
  version: '0.2.0',
  changelog: '# Changelog\n\n## [Unreleased]\n\n## [0.2.0] — 2026-12-08\n\n### Something\n',
  tagsAtHead: ['v0.2.0'],
  annotated: true,
  dirty: false,
};

describe('npm run release:check', () => {
  it('takes a clean checkout at the annotated tag of its version, with its changelog section', () => {
    expect(releaseProblems(RELEASE)).toEqual([]);
  });

  it('names each thing that makes it no release', () => {
    expect(releaseProblems({ ...RELEASE, tagsAtHead: [] })).toEqual([
      'HEAD is not tagged v0.2.0 (git tag -a v0.2.0 -m "v0.2.0")',
    ]);
    expect(releaseProblems({ ...RELEASE, tagsAtHead: ['v0.1.0'] })).toEqual(['HEAD is tagged v0.1.0, not v0.2.0']);
    expect(releaseProblems({ ...RELEASE, annotated: false })).toEqual([
      'v0.2.0 is a lightweight tag: make it annotated (git tag -a)',
    ]);
    expect(releaseProblems({ ...RELEASE, changelog: '## [Unreleased]\n\n## [0.2.01]\n' })).toEqual([
      'CHANGELOG.md has no "## [0.2.0]" section (move [Unreleased] under it)',
    ]);
    expect(releaseProblems({ ...RELEASE, dirty: true })).toHaveLength(1);
    expect(releaseProblems({ ...RELEASE, version: 'next', tagsAtHead: ['vnext'] })[0]).toMatch(/not X\.Y\.Z/);
  });
});
