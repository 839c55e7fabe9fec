import { posix } from 'node:path';

/** What a link checker may ask of the files around the documents: whether a path exists, and a Markdown file's text. */
export interface DocumentTree {
  exists(path: string): boolean;
  read(path: string): string;
}

/** A link that leads nowhere: the document it is written in, the link as written, and why. */
export interface BrokenLink {
  document: string;
  link: string;
  reason: string;
}

const FENCED_BLOCK = /^([ \t]*)(```|~~~)[^\n]*\n[\s\S]*?^\1\2[^\n]*$/gm;
const CODE_SPAN = /(`+)[\s\S]*?\1/g;
const INLINE_LINK = /!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+"[^"]*")?\s*\)/g;
const LINK_DEFINITION = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/gm;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/gm;

/** The text without fenced code blocks and code spans, which hold no links (and no headings). */
function prose(markdown: string): string {
  return markdown.replace(FENCED_BLOCK, '').replace(CODE_SPAN, (span) => span.replaceAll(/[[\]()#]/g, ' '));
}

/**
 * GitHub's anchor for a heading: the rendered text in lower case, every character that is not a letter, a digit, a
 * mark, `-`, `_` or a space dropped, spaces made `-`; a repeated anchor gets `-1`, `-2`, … (github-slugger's rules).
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const withoutFences = markdown.replace(FENCED_BLOCK, '');
  for (const [, , text] of withoutFences.matchAll(HEADING)) {
    const rendered = text!
      .replaceAll(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replaceAll(/[`*]/g, '')
      .replaceAll(/<[^>]+>/g, '');
    const base = rendered
      .toLowerCase()
      .replaceAll(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replaceAll(' ', '-');
    let anchor = base;
    for (let repeat = 1; anchors.has(anchor); repeat++) anchor = `${base}-${repeat}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** Every link destination written in the document's prose: inline links, images and link definitions. */
export function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  return [...text.matchAll(INLINE_LINK), ...text.matchAll(LINK_DEFINITION)].map((match) =>
    match[1]!.replace(/^<(.*)>$/, '$1'),
  );
}

/** Whether a destination leaves the repository (a URL with a scheme, or protocol-relative). */
function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');
}

/**
 * The links of `documents` (repository-relative paths) that lead nowhere: a relative path to no file or directory,
 * or a `#anchor` that names no heading of the Markdown file it points into (the document itself when no path is
 * given). Links to other kinds of files are checked for the file only.
 */
export function brokenLinks(documents: readonly string[], tree: DocumentTree): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (path: string) => {
    const known = anchorsOf.get(path);
    if (known) return known;
    const found = headingAnchors(tree.read(path));
    anchorsOf.set(path, found);
    return found;
  };
  for (const document of documents) {
    for (const link of linkTargets(tree.read(document))) {
      if (isExternal(link)) continue;
      const hashAt = link.indexOf('#');
      const pathPart = decodeURI(hashAt < 0 ? link : link.slice(0, hashAt));
      const anchor = hashAt < 0 ? undefined : decodeURIComponent(link.slice(hashAt + 1));
      const target = pathPart === '' ? document : posix.normalize(posix.join(posix.dirname(document), pathPart));
      if (target.startsWith('../') || target === '..') {
        broken.push({ document, link, reason: 'leads out of the repository' });
      } else if (!tree.exists(target)) {
        broken.push({ document, link, reason: `no file ${target}` });
      } else if (anchor !== undefined && target.endsWith('.md') && !anchors(target).has(anchor)) {
        broken.push({ document, link, reason: `no heading #${anchor} in ${target}` });
      }
    }
  }
  return broken;
}
