import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '#shared/http/middleware/request-body.ts';

/** How deeply arrays and objects nest in a value, counted the obvious (recursive) way. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe('nestsDeeperThan', () => {
  it('agrees with the nesting depth of any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 9 }), (value, limit) => {
        expect(nestsDeeperThan(JSON.stringify(value), limit)).toBe(depthOf(value) > limit);
      }),
      { numRuns: 500 },
    );
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ name: `[{"\\${'['.repeat(200)}`, tags: { a: '"}]{[' } });

    expect(nestsDeeperThan(text, 2)).toBe(false);
    expect(nestsDeeperThan(text, 1)).toBe(true);
  });

  it('answers for text far deeper than a recursive reader survives', () => {
    const deep = `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`;

    expect(nestsDeeperThan(deep, MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`, MAX_JSON_DEPTH)).toBe(false);
  });
});
