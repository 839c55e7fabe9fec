import { describe, expect, it } from 'vitest';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { expectCouldNotValidate } from '../support/expect-could-not-validate.ts';

const { call, createdId } = useAdminController();

/** Our spec has `fingerprint` null until the router enrolls; the document types it as a plain string. */
function expectFitsSpecButFingerprint(method: string, path: string, status: number, body: unknown) {
  expectMatchesSpec('management', method, path, status, body, [/^\/data(\/\d+)?\/fingerprint: must be string/]);
}

const names = (response: { body: { data: { name: string }[] } }) => response.body.data.map((router) => router.name);

describe.each(['/transit-routers', '/routers'])('transit routers at %s', (base) => {
  const other = base === '/routers' ? '/transit-routers' : '/routers';
  const suffix = base.slice(1);

  it('creates a router with its enrollment, shown offline and unverified under both paths', async () => {
    const created = await call('POST', base, { name: `tr-${suffix}`, cost: 3, tags: { team: 'net' } });
    const id = created.body.data.id;
    const detail = await call('GET', `${base}/${id}`);
    const elsewhere = await call('GET', `${other}/${id}`);

    expect(created.status).toBe(201);
    expectMatchesSpec('management', 'POST', base, 201, created.body);
    expect(detail.body.data).toMatchObject({
      id,
      name: `tr-${suffix}`,
      cost: 3,
      noTraversal: false,
      disabled: false,
      isOnline: false,
      isVerified: false,
      fingerprint: null,
      // Signed when the router was made; its claims are checked in enrollment-jwt.test.ts.
      enrollmentJwt: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      tags: { team: 'net' },
    });
    expect(detail.body.data.enrollmentToken).toMatch(/\S{16,}/);
    expect(detail.body.data.enrollmentExpiresAt > detail.body.data.enrollmentCreatedAt).toBe(true);
    expectFitsSpecButFingerprint('GET', `${base}/{id}`, 200, detail.body);
    expect(elsewhere.body.data).toEqual(detail.body.data);
  });

  it('replaces, patches and deletes', async () => {
    const id = await createdId(base, { name: `tr-update-${suffix}`, cost: 4, noTraversal: true });

    const replaced = await call('PUT', `${base}/${id}`, { name: `tr-update-2-${suffix}`, disabled: true });
    const afterReplace = (await call('GET', `${base}/${id}`)).body.data;
    const patched = await call('PATCH', `${base}/${id}`, { cost: 65535, disabled: null });
    const afterPatch = (await call('GET', `${base}/${id}`)).body.data;
    const deleted = await call('DELETE', `${base}/${id}`);

    expect([replaced.status, patched.status, deleted.status]).toEqual([200, 200, 200]);
    expectMatchesSpec('management', 'PUT', `${base}/{id}`, 200, replaced.body);
    expectMatchesSpec('management', 'PATCH', `${base}/{id}`, 200, patched.body);
    expectMatchesSpec('management', 'DELETE', `${base}/{id}`, 200, deleted.body);
    expect(afterReplace).toMatchObject({ name: `tr-update-2-${suffix}`, cost: 0, noTraversal: false, disabled: true });
    expect(afterPatch).toMatchObject({ name: `tr-update-2-${suffix}`, cost: 65535, disabled: false });
    expect((await call('GET', `${other}/${id}`)).status).toBe(404);
  });

  it.each([
    ['no name', { cost: 1 }, 'name'],
    ['a blank name', { name: '  ' }, 'name'],
    ['a cost above 65535', { name: 'tr-bad', cost: 70000 }, 'cost'],
    ['a string for noTraversal', { name: 'tr-bad', noTraversal: 'no' }, 'noTraversal'],
  ])('answers 400 COULD_NOT_VALIDATE for %s', async (_case, body, field) => {
    const response = await call('POST', base, body);

    expectCouldNotValidate(response, field, { api: 'management', method: 'POST', path: base });
  });

  it('answers 404 for a router that does not exist', async () => {
    const detail = await call('GET', `${base}/nope`);
    const patched = await call('PATCH', `${base}/nope`, { cost: 1 });

    expect([detail.status, patched.status]).toEqual([404, 404]);
    expectMatchesSpec('management', 'GET', `${base}/{id}`, 404, detail.body);
    expectMatchesSpec('management', 'PATCH', `${base}/{id}`, 404, patched.body);
  });
});

describe('transit router names and lists', () => {
  it('refuses a name another router holds, edge or transit', async () => {
    const id = await createdId('/transit-routers', { name: 'tr-name' });
    await createdId('/edge-routers', { name: 'er-name' });

    const twice = await call('POST', '/routers', { name: 'tr-name' });
    const edgeName = await call('POST', '/transit-routers', { name: 'er-name' });
    const renamed = await call('PUT', `/routers/${id}`, { name: 'er-name' });

    for (const response of [twice, edgeName, renamed]) {
      expect(response.status).toBe(400);
      expect(response.body.error.cause.field).toBe('name');
    }
  });

  it('filters, sorts and pages, and lists only transit routers', async () => {
    for (const [name, cost] of [
      ['tl-a', 30],
      ['tl-b', 10],
      ['tl-c', 20],
    ] as const) {
      await createdId('/transit-routers', { name, cost });
    }
    await createdId('/edge-routers', { name: 'tl-edge' });
    const filter = (text: string) => `filter=${encodeURIComponent(text)}`;

    const all = await call('GET', `/transit-routers?${filter('name contains "tl-"')}`);
    const sorted = await call('GET', `/routers?${filter('name contains "tl-" and cost > 10 sort by cost desc')}`);
    const paged = await call('GET', `/routers?${filter('name contains "tl-"')}&sort=name&limit=2&offset=1`);
    const bad = await call('GET', `/routers?${filter('roleAttributes contains "x"')}`);

    expect(names(all)).toEqual(expect.arrayContaining(['tl-a', 'tl-b', 'tl-c']));
    expect(names(all)).not.toContain('tl-edge');
    expectFitsSpecButFingerprint('GET', '/transit-routers', 200, all.body);
    expectFitsSpecButFingerprint('GET', '/routers', 200, paged.body);
    expect(names(sorted)).toEqual(['tl-a', 'tl-c']);
    expect(names(paged)).toEqual(['tl-b', 'tl-c']);
    expect(paged.body.meta.pagination).toEqual({ limit: 2, offset: 1, totalCount: 3 });
    expect(bad.status).toBe(400);
  });
});

describe('router counts', () => {
  it('counts edge routers, transit routers and terminators in the summary', async () => {
    const edge = (await call('GET', '/edge-routers?limit=1')).body.meta.pagination.totalCount;
    const transit = (await call('GET', '/routers?limit=1')).body.meta.pagination.totalCount;

    const summary = await call('GET', '/summary');

    expect(summary.body.data).toMatchObject({ edgeRouters: edge, routers: transit, terminators: 0 });
  });
});
