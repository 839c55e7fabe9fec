import { describe, expect, it } from 'vitest';
import type { ApiError } from '#shared/errors/api-error.ts';
import { bodyTextWithin } from '#shared/http/response-size.ts';

const BOUND = 100_000;
const page = (count: number, bytes: number) => ({
  data: Array.from({ length: count }, (_, i) => ({ id: `e${i}`, note: '"'.repeat(bytes) })),
  meta: { apiVersion: '0.0.1', pagination: { limit: 500, offset: 40, totalCount: 1000 }, filterableFields: [] },
});

describe('a body kept to a response bound', () => {
  it('is sent as it is when it fits', () => {
    const body = page(3, 10);
    expect(bodyTextWithin(body, BOUND)).toBe(JSON.stringify(body));
  });

  it('is a list page cut to the entities that fit, escapes counted, with the limit saying how many', () => {
    // Quotes weigh double inside the response JSON: 40 entities of 2,000 quotes are 160 KB there.
    const cut = JSON.parse(bodyTextWithin(page(40, 2000), BOUND));

    expect(cut.data.length).toBeGreaterThan(0);
    expect(cut.data.length).toBeLessThan(40);
    expect(cut.meta.pagination).toEqual({ limit: cut.data.length, offset: 40, totalCount: 1000 });
    expect(JSON.stringify(JSON.stringify(cut)).length).toBeLessThanOrEqual(BOUND);
    expect(cut.data.at(-1).id).toBe(`e${cut.data.length - 1}`);
  });

  it('is a 500 RESPONSE_TOO_LARGE when it is no list, or a list whose first entity alone does not fit', () => {
    for (const body of [{ data: { note: 'x'.repeat(BOUND) } }, page(2, BOUND)]) {
      expect(() => bodyTextWithin(body, BOUND)).toThrow(
        expect.objectContaining({ code: 'RESPONSE_TOO_LARGE', status: 500 }) as ApiError,
      );
    }
  });
});
