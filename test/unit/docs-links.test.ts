import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { brokenLinks, type DocumentTree, headingAnchors, linkTargets } from '../support/markdown-links.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const repository: DocumentTree = {
  exists: (path) => existsSync(REPO_ROOT + path),
  read: (path) => readFileSync(REPO_ROOT + path, 'utf8'),
};

/** The Markdown files of a directory of the repository (not below it), as repository-relative paths. */
function markdownIn(directory: string): string[] {
  const prefix = directory === '' ? '' : `${directory}/`;
  if (!existsSync(REPO_ROOT + directory)) return [];
  return readdirSync(REPO_ROOT + directory)
    .filter((name) => name.endsWith('.md'))
    .map((name) => prefix + name);
}

const DOCS = markdownIn('docs');
const DOCUMENTS = [...markdownIn(''), ...DOCS, ...markdownIn('examples')];

/** A tree held in memory, for documents written in the test. */
function treeOf(files: Record<string, string>): DocumentTree {
  return {
    exists: (path) => path in files || Object.keys(files).some((file) => file.startsWith(`${path}/`)),
    read: (path) => files[path] ?? '',
  };
}

describe('links between the repository documents', () => {
  it('reads the README, the contributor and security pages, the changelog, docs/ and the examples', () => {
    expect(DOCUMENTS).toEqual(
      expect.arrayContaining([
        'README.md',
        'CONTRIBUTING.md',
        'SECURITY.md',
        'CHANGELOG.md',
        'docs/architecture.md',
        'docs/aws.md',
        'docs/security.md',
        'examples/README.md',
      ]),
    );
  });

  it('every relative link leads to a file, and every anchor to a heading of the page it names', () => {
    expect(brokenLinks(DOCUMENTS, repository)).toEqual([]);
  });

  it('the README links to every page of docs/', () => {
    const fromReadme = new Set(linkTargets(repository.read('README.md')).map((target) => target.split('#')[0]));

    expect(DOCS.filter((page) => !fromReadme.has(page))).toEqual([]);
  });

  it.each(['README.md', ...DOCS])('%s lists each of its sections in its table of contents', (page) => {
    const text = repository.read(page);
    const sections = [...text.matchAll(/^## (.+)$/gm)].map((match) => [...headingAnchors(`## ${match[1]}`)][0]!);
    const linked = new Set(linkTargets(text));

    expect(sections.filter((anchor) => !linked.has(`#${anchor}`))).toEqual([]);
  });
});

describe('the link checker', () => {
  const page = [
    '# Deploying to AWS',
    '',
    "## Front door: REST API or HTTP API (`FRONT_DOOR`), the team's choice",
    '',
    '## Front door: REST API or HTTP API (`FRONT_DOOR`), the team’s choice',
    '',
    '```md',
    '## Not a heading',
    '[not a link](gone.md)',
    '```',
    '',
    '## Between the fences',
    '',
    '```sh',
    'echo',
    '```',
    '',
    'See [the door](#front-door-rest-api-or-http-api-front_door-the-teams-choice), [again](#front-door-rest-api-or-http-api-front_door-the-teams-choice-1),',
    '[the top](#deploying-to-aws), [between](#between-the-fences), [the code](../README.md) and `[a span](nowhere.md)`; <https://example.com>.',
  ].join('\n');

  it('finds nothing wrong with links to files and headings that exist, ignoring code', () => {
    const tree = treeOf({ 'README.md': '# Title', 'docs/aws.md': page });

    expect(brokenLinks(['docs/aws.md'], tree)).toEqual([]);
  });

  it('reports a link to a missing file, a missing anchor, an anchor of another page and a link out of the repository', () => {
    const tree = treeOf({
      'README.md': '# Ziti serverless controller\n\n## Quick start\n',
      'docs/aws.md': page,
      'docs/security.md': [
        '# Security',
        'See [AWS](aws.md#not-there), [the quick start](../README.md#quick-start), [gone](gone.md),',
        '[a heading in code](aws.md#not-a-heading), [above](#security), [below](#nowhere) and [out](../../x.md).',
        '',
        '[definition]: ../README.md#deploying-to-aws',
      ].join('\n'),
    });

    expect(brokenLinks(['docs/security.md'], tree)).toEqual([
      { document: 'docs/security.md', link: 'aws.md#not-there', reason: 'no heading #not-there in docs/aws.md' },
      { document: 'docs/security.md', link: 'gone.md', reason: 'no file docs/gone.md' },
      {
        document: 'docs/security.md',
        link: 'aws.md#not-a-heading',
        reason: 'no heading #not-a-heading in docs/aws.md',
      },
      { document: 'docs/security.md', link: '#nowhere', reason: 'no heading #nowhere in docs/security.md' },
      { document: 'docs/security.md', link: '../../x.md', reason: 'leads out of the repository' },
      {
        document: 'docs/security.md',
        link: '../README.md#deploying-to-aws',
        reason: 'no heading #deploying-to-aws in README.md',
      },
    ]);
  });
});
