import { describe, expect, it } from 'vitest';
import { useAdminController } from '../support/admin-controller.ts';
import { authPolicyBody } from '../support/management-fixtures.ts';

const { call, createdId } = useAdminController();
const q = encodeURIComponent;
const identity = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: 'User',
  isAdmin: false,
  ...extra,
});

describe('transaction budget', () => {
  it('refuses a write past one transaction with a 400, not a 500', async () => {
    const body = authPolicyBody('many-signers');
    body.primary.extJwt = { allowed: true, allowedSigners: Array.from({ length: 100 }, (_, i) => `signer-${i}`) };

    const response = await call('POST', '/auth-policies', body);

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('COULD_NOT_VALIDATE');
    expect(response.body.error.message).toMatch(/at most 100/);
  });

  it('counts a repeated id once', async () => {
    const body = authPolicyBody('same-signer');
    body.primary.extJwt = { allowed: true, allowedSigners: Array.from({ length: 100 }, () => 'one-signer') };

    const response = await call('POST', '/auth-policies', body);

    expect(response.status).toBe(400);
    expect(response.body.error.cause).toMatchObject({ field: 'primary.extJwt.allowedSigners', value: 'one-signer' });
  });
});

describe('contention', () => {
  it('lets a burst of 20 concurrent PATCHes of one identity all succeed', async () => {
    const id = await createdId('/identities', identity('contended'));

    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call('PATCH', `/identities/${id}`, { tags: { [`writer${i}`]: true } })),
    );

    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
  });
});

describe('role-attribute catalog', () => {
  const attributesOf = async (query = '') =>
    (await call('GET', `/identity-role-attributes${query}`)).body as {
      data: string[];
      meta: { pagination: { totalCount: number } };
    };

  it('keeps nothing from writes that fail', async () => {
    await createdId('/identities', identity('catalog-taken'));

    for (let i = 0; i < 10; i++) {
      const rejected = await call('POST', '/identities', identity('catalog-taken', { roleAttributes: [`ghost-${i}`] }));
      expect(rejected.status).toBe(400);
    }
    const listed = await attributesOf(`?filter=${q('id contains "ghost"')}`);

    expect(listed.data).toEqual([]);
  });

  it('drops an attribute when its last holder lets go of it, and keeps it while one holds it', async () => {
    const a = await createdId('/identities', identity('holder-a', { roleAttributes: ['fleeting', 'shared'] }));
    const b = await createdId('/identities', identity('holder-b', { roleAttributes: ['shared'] }));

    await call('PATCH', `/identities/${a}`, { roleAttributes: ['shared'] });
    await call('DELETE', `/identities/${b}`);
    const listed = await attributesOf(`?filter=${q('id in ["fleeting", "shared"]')}`);

    expect(listed.data).toEqual(['shared']);
  });

  it('pages in order, accepts the sort clients send, and counts what is in use', async () => {
    await createdId('/identities', identity('pager', { roleAttributes: ['p1', 'p2', 'p3', 'p4'] }));
    const all = (await attributesOf('?limit=500')).data;

    const firstTwo = await attributesOf('?limit=2&sort=name%20asc');
    const nextTwo = await attributesOf('?limit=2&offset=2&sort=name%20asc');
    const descending = await attributesOf('?limit=500&sort=id%20desc');
    const otherField = await call('GET', '/identity-role-attributes?sort=createdAt%20desc');

    expect([...firstTwo.data, ...nextTwo.data]).toEqual([...all].sort().slice(0, 4));
    expect(firstTwo.meta.pagination.totalCount).toBe(all.length);
    expect(descending.data).toEqual([...all].sort().reverse());
    expect(otherField.status).toBe(200);
  });
});

describe('list input that used to fail', () => {
  it.each(['name = ""', 'externalId = ""', 'name in ["", "x"]', 'id = ""'])(
    'answers %s with an empty page',
    async (filter) => {
      const response = await call('GET', `/identities?filter=${q(filter)}`);

      expect(response.status).toBe(200);
      expect(response.body.data).toEqual([]);
    },
  );

  it('answers username = "" on authenticators with an empty page', async () => {
    const response = await call('GET', `/authenticators?filter=${q('username = ""')}`);

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual([]);
  });

  it('de-duplicates roleFilter entries and caps the distinct ones with a 400', async () => {
    // Comma-separated in one parameter, as the reference takes them; 1,000 keeps the URL within server limits.
    const repeated = `roleFilter=${q(Array.from({ length: 1000 }, () => '#same').join(','))}`;
    const distinct = `roleFilter=${q(Array.from({ length: 1000 }, (_, i) => `#r${i}`).join(','))}`;

    const started = Date.now();
    const ok = await call('GET', `/identities?${repeated}`);
    const refused = await call('GET', `/identities?${distinct}`);

    expect(ok.status).toBe(200);
    expect(refused.status).toBe(400);
    expect(refused.body.error.cause.field).toBe('roleFilter');
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('what the admin console sends', () => {
  it('stores a blank externalId as none, for any number of identities', async () => {
    const first = await createdId('/identities', identity('zac-1', { externalId: '' }));
    const second = await call('POST', '/identities', identity('zac-2', { externalId: '' }));
    const patched = await call('PATCH', `/identities/${first}`, { externalId: '' });

    const detail = await call('GET', `/identities/${first}`);

    expect(second.status).toBe(201);
    expect(patched.status).toBe(200);
    expect(detail.body.data.externalId).toBeNull();
  });
});
