import { describe, expect, it } from 'vitest';
import { expectMatchesSpec, specMismatches } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { expectCouldNotValidate } from '../support/expect-could-not-validate.ts';

const { controller, call } = useAdminController();

// The tests build on each other: global settings first, then the controller's own, then their removal.
describe('controller settings', () => {
  it('starts with global settings and none of the controller’s own', async () => {
    const listed = await call('GET', '/controller-settings');
    const global = await call('GET', '/controller-settings/global');
    const own = await call('GET', '/controller-settings/controller');

    expect(listed.status).toBe(200);
    expect(listed.body.data.map((s: { id: string }) => s.id)).toEqual(['global']);
    // The document's list type is malformed (`controllerSettingsList` has `items: null`), so only the envelope is checked.
    expect(listed.body.meta.pagination.totalCount).toBe(1);
    expect(global.body.data).toMatchObject({ id: 'global', oidc: { redirectUris: [], postLogoutUris: [] } });
    expectMatchesSpec('management', 'GET', '/controller-settings/{id}', 200, global.body);
    expect(own.status).toBe(404);
    expectMatchesSpec('management', 'GET', '/controller-settings/{id}', 404, own.body);
  });

  it('replaces and patches the global settings', async () => {
    const replaced = await call('PUT', '/controller-settings/global/effective', {
      oidc: { redirectUris: ['https://app.example/callback'], postLogoutUris: ['https://app.example/bye'] },
    });
    const patched = await call('PATCH', '/controller-settings/global/effective', {
      oidc: { redirectUris: ['https://app.example/callback', 'http://localhost:8080/cb'] },
    });
    const global = await call('GET', '/controller-settings/global');

    expect([replaced.status, patched.status]).toEqual([200, 200]);
    expectMatchesSpec('management', 'PUT', '/controller-settings/{id}/effective', 200, replaced.body);
    expectMatchesSpec('management', 'PATCH', '/controller-settings/{id}/effective', 200, patched.body);
    expect(global.body.data.oidc).toEqual({
      redirectUris: ['https://app.example/callback', 'http://localhost:8080/cb'],
      postLogoutUris: ['https://app.example/bye'],
    });
  });

  it('creates the controller’s own settings, which override the global ones list by list', async () => {
    const created = await call('POST', '/controller-settings', {
      controllerId: 'controller',
      oidc: { redirectUris: ['https://own.example/cb'] },
    });
    const effective = await call('GET', '/controller-settings/controller/effective');
    const listed = await call('GET', '/controller-settings');

    expect(created.status).toBe(201);
    expect(created.body.data.id).toBe('controller');
    expectMatchesSpec('management', 'POST', '/controller-settings', 201, created.body);
    expect(effective.body.data).toMatchObject({
      id: 'controller',
      instance: { oidc: { redirectUris: ['https://own.example/cb'] } },
      effective: {
        oidc: { redirectUris: ['https://own.example/cb'], postLogoutUris: ['https://app.example/bye'] },
      },
    });
    expectMatchesSpec('management', 'GET', '/controller-settings/{id}/effective', 200, effective.body);
    expect(listed.body.data.map((s: { id: string }) => s.id)).toEqual(['controller', 'global']);
  });

  it.each([
    ['an unknown controller', { controllerId: 'other' }, 'controllerId'],
    ['the global settings', { controllerId: 'global' }, 'controllerId'],
    ['settings that already exist', { controllerId: 'controller' }, 'controllerId'],
    ['no controllerId', { oidc: {} }, 'controllerId'],
    [
      'a redirect URI that is not one',
      { controllerId: 'controller', oidc: { redirectUris: ['nope'] } },
      'oidc.redirectUris.0',
    ],
    ['URIs that are not a list', { controllerId: 'controller', oidc: { postLogoutUris: 'x' } }, 'oidc.postLogoutUris'],
  ])('answers 400 naming the field for %s', async (_case, body, field) => {
    const response = await call('POST', '/controller-settings', body);

    expectCouldNotValidate(response, field, { api: 'management', method: 'POST', path: '/controller-settings' });
  });

  it('answers 404 for settings of no known controller', async () => {
    const effective = await call('GET', '/controller-settings/other/effective');
    const replaced = await call('PUT', '/controller-settings/other/effective', { oidc: {} });
    const patched = await call('PATCH', '/controller-settings/other/effective', { oidc: {} });

    expect([effective.status, replaced.status, patched.status]).toEqual([404, 404, 404]);
    expectMatchesSpec('management', 'GET', '/controller-settings/{id}/effective', 404, effective.body);
  });

  it('deletes the controller’s own settings, after which the global ones apply; the global ones stay', async () => {
    const deleted = await call('DELETE', '/controller-settings/controller/effective');
    const effective = await call('GET', '/controller-settings/controller/effective');
    const again = await call('DELETE', '/controller-settings/controller/effective');
    const global = await call('DELETE', '/controller-settings/global/effective');

    expect(deleted.status).toBe(200);
    expectMatchesSpec('management', 'DELETE', '/controller-settings/{id}/effective', 200, deleted.body);
    expect(effective.body.data.effective.oidc.redirectUris).toEqual([
      'https://app.example/callback',
      'http://localhost:8080/cb',
    ]);
    expect(effective.body.data.instance).toEqual({ oidc: {} });
    // Nothing to delete: the document lists no 404 for this operation.
    expect(again.status).toBe(404);
    expect(specMismatches('management', 'DELETE', '/controller-settings/{id}/effective', 404, again.body)).toEqual([
      expect.stringContaining('status 404 is not documented'),
    ]);
    expect(global.status).toBe(409);
    expectMatchesSpec('management', 'DELETE', '/controller-settings/{id}/effective', 409, global.body);
  });

  it('is for admins only', async () => {
    const response = await controller().call('GET', '/edge/management/v1/controller-settings');

    expect(response.status).toBe(401);
  });
});
