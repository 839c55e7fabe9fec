/**
 * Semantic versions and version ranges as the reference's OS posture check compares them (blang/semver v3): a
 * reported version must be a full `major.minor.patch` (optional `-prerelease` and `+build`), so "10" or "10.5" match
 * nothing; a check's version is a range of space-separated (AND) comparisons joined by `||` (OR), each an operator
 * (`=`, `==`, `!=`, `>`, `>=`, `<`, `<=`, none meaning `=`) and a full version, or a wildcard `1.x` / `1.2.x`.
 */

export interface SemVer {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  readonly pre: readonly (string | number)[];
}

const NUMERIC = /^(0|[1-9]\d*)$/;
const IDENTIFIER = /^[0-9A-Za-z-]+$/;

/** A strict semantic version, or undefined when the text is not one. */
export function parseSemVer(text: string): SemVer | undefined {
  const plus = text.indexOf('+');
  const withoutBuild = plus >= 0 ? text.slice(0, plus) : text;
  if (
    plus >= 0 &&
    !text
      .slice(plus + 1)
      .split('.')
      .every((part) => IDENTIFIER.test(part))
  )
    return undefined;
  const dash = withoutBuild.indexOf('-');
  const core = dash >= 0 ? withoutBuild.slice(0, dash) : withoutBuild;
  const parts = core.split('.');
  if (parts.length !== 3 || !parts.every((part) => NUMERIC.test(part))) return undefined;
  const pre: (string | number)[] = [];
  if (dash >= 0) {
    for (const part of withoutBuild.slice(dash + 1).split('.')) {
      if (!IDENTIFIER.test(part)) return undefined;
      if (/^\d+$/.test(part)) {
        if (!NUMERIC.test(part)) return undefined;
        pre.push(Number(part));
      } else pre.push(part);
    }
  }
  const [major, minor, patch] = parts.map(Number) as [number, number, number];
  return { major, minor, patch, pre };
}

/** Negative, zero or positive as `a` orders before, with or after `b` (pre-releases before their release). */
export function compareSemVer(a: SemVer, b: SemVer): number {
  for (const key of ['major', 'minor', 'patch'] as const) if (a[key] !== b[key]) return a[key] < b[key] ? -1 : 1;
  if (a.pre.length === 0 || b.pre.length === 0) return b.pre.length - a.pre.length;
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i] as string | number;
    const y = b.pre[i] as string | number;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x < y ? -1 : 1;
    if (typeof x === 'number') return -1;
    if (typeof y === 'number') return 1;
    return x < y ? -1 : 1;
  }
  return a.pre.length - b.pre.length;
}

/** A parsed range: true for a version inside it. */
export type SemVerRange = (version: SemVer) => boolean;

const OPERATORS: Readonly<Record<string, (order: number) => boolean>> = {
  '': (order) => order === 0,
  '=': (order) => order === 0,
  '==': (order) => order === 0,
  '!=': (order) => order !== 0,
  '>': (order) => order > 0,
  '>=': (order) => order >= 0,
  '<': (order) => order < 0,
  '<=': (order) => order <= 0,
};

/** Splits on spaces, except a space right after an operator character ("> 1.0.0" is one comparison). */
function splitAndTrim(text: string): string[] {
  const result: string[] = [];
  let last = 0;
  let lastChar = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (char === ' ' && !['>', '<', '='].includes(lastChar)) {
      result.push(text.slice(last, i));
      last = i + 1;
    } else if (char !== ' ') lastChar = char;
  }
  result.push(text.slice(last));
  return result.map((part) => part.replaceAll(' ', '')).filter((part) => part !== '');
}

function splitComparator(part: string): [string, string] {
  const match = /^([<>=!]*)(.*)$/.exec(part) as RegExpExecArray;
  return [match[1] as string, match[2] as string];
}

/** `1.x` / `1.2.x` as the comparisons it stands for; undefined for a malformed wildcard. */
function expandWildcard(part: string): string[] | undefined {
  const [operator, version] = splitComparator(part);
  const pieces = version.split('.');
  if (pieces.at(-1) !== 'x' || (pieces.length !== 2 && pieces.length !== 3)) return undefined;
  const numbers = pieces.slice(0, -1);
  if (!numbers.every((piece) => NUMERIC.test(piece))) return undefined;
  const flat = [...numbers.map(Number), 0, 0].slice(0, 3) as [number, number, number];
  const next: [number, number, number] = pieces.length === 2 ? [flat[0] + 1, 0, 0] : [flat[0], flat[1] + 1, 0];
  const text = (v: readonly number[]) => v.join('.');
  switch (operator) {
    case '>':
      return [`>=${text(next)}`];
    case '>=':
      return [`>=${text(flat)}`];
    case '<':
      return [`<${text(flat)}`];
    case '<=':
      return [`<${text(next)}`];
    case '':
    case '=':
    case '==':
      return [`>=${text(flat)}`, `<${text(next)}`];
    case '!=':
      return [`<${text(flat)}`, `>=${text(next)}`];
    default:
      return undefined;
  }
}

/** A version range, or undefined when the text is not one (the reference then ignores that entry). */
export function parseSemVerRange(text: string): SemVerRange | undefined {
  const alternatives: SemVerRange[] = [];
  let current: string[] = [];
  const groups: string[][] = [];
  for (const part of splitAndTrim(text)) {
    if (part === '||') {
      if (current.length === 0) return undefined;
      groups.push(current);
      current = [];
    } else current.push(part);
  }
  if (current.length === 0) return undefined;
  groups.push(current);
  for (const group of groups) {
    const comparisons: SemVerRange[] = [];
    for (const raw of group) {
      const expanded = raw.includes('x') ? expandWildcard(raw) : [raw];
      if (!expanded) return undefined;
      for (const part of expanded) {
        const [operator, versionText] = splitComparator(part);
        const test = OPERATORS[operator];
        const bound = parseSemVer(versionText);
        if (!test || !bound) return undefined;
        comparisons.push((version) => test(compareSemVer(version, bound)));
      }
    }
    alternatives.push((version) => comparisons.every((compare) => compare(version)));
  }
  return (version) => alternatives.some((alternative) => alternative(version));
}
