import { describe, expect, it } from 'vitest';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';

const { controller, admin } = useAdminController();

const q = encodeURIComponent;

describe('controllers', () => {
  it('lists this deployment as the one controller, with its API and control channel addresses, on the management API', async () => {
    const response = await controller().call('GET', '/edge/management/v1/controllers', { token: admin() });

    expect(response.status).toBe(200);
    expectMatchesSpec('management', 'GET', '/controllers', 200, response.body);
    expect(response.body.data).toHaveLength(1);
    expect(response.body.data[0]).toMatchObject({
      id: 'controller',
      name: new URL(controller().origin).host,
      isOnline: true,
      // Where routers dial the control channel: the host and port its API is reached at, locally one listener.
      ctrlAddress: `tls:${new URL(controller().origin).hostname}:${new URL(controller().origin).port}`,
      apiAddresses: {
        'edge-client': [{ url: `${controller().origin}/edge/client/v1`, version: 'v1' }],
        'edge-management': [{ url: `${controller().origin}/edge/management/v1`, version: 'v1' }],
        fabric: [{ url: `${controller().origin}/fabric/v1`, version: 'v1' }],
      },
    });
    expect(response.body.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: 1 });
  });

  it('lists the client address only, and no control channel, on the client API', async () => {
    const response = await controller().call('GET', '/edge/client/v1/controllers', { token: admin() });

    expect(response.status).toBe(200);
    expectMatchesSpec('client', 'GET', '/controllers', 200, response.body);
    expect(Object.keys(response.body.data[0].apiAddresses)).toEqual(['edge-client']);
    expect(response.body.data[0]).not.toHaveProperty('ctrlAddress');
  });

  it('filters like any list', async () => {
    const none = await controller().call('GET', `/edge/management/v1/controllers?filter=${q('isOnline = false')}`, {
      token: admin(),
    });
    const bad = await controller().call('GET', `/edge/management/v1/controllers?filter=${q('nope = 1')}`, {
      token: admin(),
    });

    expect(none.body.data).toEqual([]);
    expect(none.body.meta.pagination.totalCount).toBe(0);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_FILTER');
  });

  it('needs a session', async () => {
    const client = await controller().call('GET', '/edge/client/v1/controllers');
    const management = await controller().call('GET', '/edge/management/v1/controllers');

    expect([client.status, management.status]).toEqual([401, 401]);
  });
});
