import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { identities, newIdentity } from '#shared/entities/identity.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import { MAX_MAP_BYTES } from '#shared/schemas/map-field.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { expectCouldNotValidate } from '../support/expect-could-not-validate.ts';
import { authPolicyBody } from '../support/management-fixtures.ts';

const { controller, admin, call, createdId } = useAdminController();

/** Keys that trip code treating maps as plain JS objects: every property name of Object.prototype, and more. */
const hostileKeys = [
  ...Object.getOwnPropertyNames(Object.prototype),
  '',
  ' ',
  'PK',
  'SK',
  'version',
  '$json',
  'a.b',
  '#x',
  ':v',
  'ünïcödé',
  '🙂',
];
const mapKey = fc.oneof(fc.constantFrom(...hostileKeys), fc.string({ maxLength: 20 }));
const tagValue = fc.oneof(fc.string({ maxLength: 30 }), fc.boolean(), fc.constant(null));
/** A map as JSON text, so `__proto__` arrives as an own key, exactly as a client's body would carry it. */
const mapJson = <V>(value: fc.Arbitrary<V>) =>
  fc
    .uniqueArray(fc.tuple(mapKey, value), { maxLength: 8, selector: ([key]) => key })
    .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`);

interface MapRoute {
  readonly name: string;
  readonly field: string;
  readonly value: fc.Arbitrary<unknown>;
  /** Writes `mapText` into the field; returns the status and the stored map read back. */
  write(mapText: string): Promise<{ status: number; stored?: unknown }>;
}

const raw = (method: string, path: string, body: string) =>
  controller().call(method, `/edge/management/v1${path}`, {
    token: admin(),
    rawBody: body,
    headers: { 'content-type': 'application/json' },
  });

/** A body as JSON text with `tags` spliced in as sent (plain concatenation: a key such as `$\`` is no pattern). */
function withTags(body: object, mapText: string): string {
  return `${JSON.stringify(body).slice(0, -1)},"tags":${mapText}}`;
}

let sequence = 0;
const unique = (prefix: string) => `${prefix}-${++sequence}`;

async function readBack(path: string, field: string, status: number) {
  if (status >= 300) return { status };
  const detail = await call('GET', path);
  return { status, stored: detail.body.data[field] };
}

function identityRoutes(field: string, value: fc.Arbitrary<unknown>): MapRoute[] {
  return [
    {
      name: `POST /identities ${field}`,
      field,
      value,
      write: async (mapText) => {
        const response = await raw(
          'POST',
          '/identities',
          `{"name":${JSON.stringify(unique('map'))},"type":"User","isAdmin":false,"${field}":${mapText}}`,
        );
        return readBack(`/identities/${response.body?.data?.id}`, field, response.status);
      },
    },
    {
      name: `PATCH /identities/{id} ${field}`,
      field,
      value,
      write: async (mapText) => {
        const id = await createdId('/identities', { name: unique('map'), type: 'User', isAdmin: false });
        const response = await raw('PATCH', `/identities/${id}`, `{"${field}":${mapText}}`);
        return readBack(`/identities/${id}`, field, response.status);
      },
    },
    {
      name: `PUT /identities/{id} ${field}`,
      field,
      value,
      write: async (mapText) => {
        const id = await createdId('/identities', { name: unique('map'), type: 'User', isAdmin: false });
        const body = `{"name":${JSON.stringify(unique('map'))},"type":"User","isAdmin":false,"${field}":${mapText}}`;
        const response = await raw('PUT', `/identities/${id}`, body);
        return readBack(`/identities/${id}`, field, response.status);
      },
    },
  ];
}

const routes: MapRoute[] = [
  ...identityRoutes('tags', tagValue),
  ...identityRoutes('appData', tagValue),
  ...identityRoutes('serviceHostingCosts', fc.integer({ min: 0, max: 65535 })),
  ...identityRoutes('serviceHostingPrecedences', fc.constantFrom('default', 'required', 'failed')),
  {
    name: 'POST /auth-policies tags',
    field: 'tags',
    value: tagValue,
    write: async (mapText) => {
      const body = withTags(authPolicyBody(unique('map-policy')), mapText);
      const response = await raw('POST', '/auth-policies', body);
      return readBack(`/auth-policies/${response.body?.data?.id}`, 'tags', response.status);
    },
  },
  {
    name: 'PUT /auth-policies/{id} tags',
    field: 'tags',
    value: tagValue,
    write: async (mapText) => {
      const id = await createdId('/auth-policies', authPolicyBody(unique('map-policy')));
      const body = withTags(authPolicyBody(unique('map-policy')), mapText);
      const response = await raw('PUT', `/auth-policies/${id}`, body);
      return readBack(`/auth-policies/${id}`, 'tags', response.status);
    },
  },
  {
    name: 'PATCH /auth-policies/{id} tags',
    field: 'tags',
    value: tagValue,
    write: async (mapText) => {
      const id = await createdId('/auth-policies', authPolicyBody(unique('map-policy')));
      const response = await raw('PATCH', `/auth-policies/${id}`, `{"tags":${mapText}}`);
      return readBack(`/auth-policies/${id}`, 'tags', response.status);
    },
  },
  {
    name: 'PATCH /current-identity/authenticators/{id} tags (self-service)',
    field: 'tags',
    value: tagValue,
    write: async (mapText) => {
      const identityId = await createdId('/identities', { name: unique('map-self'), type: 'User', isAdmin: false });
      const username = unique('map-self-user');
      const id = await createdId('/authenticators', {
        identityId,
        method: 'updb',
        username,
        password: 'map-Passw0rd!',
      });
      const token = await controller().login(username, 'map-Passw0rd!');
      const response = await controller().call('PATCH', `/edge/client/v1/current-identity/authenticators/${id}`, {
        token,
        rawBody: `{"currentPassword":"map-Passw0rd!","tags":${mapText}}`,
        headers: { 'content-type': 'application/json' },
      });
      return readBack(`/authenticators/${id}`, 'tags', response.status);
    },
  },
  ...(['PUT', 'PATCH'] as const).map(
    (method): MapRoute => ({
      name: `${method} /authenticators/{id} tags`,
      field: 'tags',
      value: tagValue,
      write: async (mapText) => {
        const identityId = await createdId('/identities', { name: unique('map'), type: 'User', isAdmin: false });
        const id = await createdId('/authenticators', {
          identityId,
          method: 'updb',
          username: unique('map-user'),
          password: 'map-Passw0rd!',
        });
        const body = `{"username":${JSON.stringify(unique('map-user'))},"password":"map-Passw0rd!","tags":${mapText}}`;
        const response = await raw(method, `/authenticators/${id}`, body);
        return readBack(`/authenticators/${id}`, 'tags', response.status);
      },
    }),
  ),
  {
    name: 'POST /authenticators tags',
    field: 'tags',
    value: tagValue,
    write: async (mapText) => {
      const identityId = await createdId('/identities', { name: unique('map'), type: 'User', isAdmin: false });
      const body = `{"identityId":"${identityId}","method":"updb","username":${JSON.stringify(unique('map-user'))},"password":"map-Passw0rd!","tags":${mapText}}`;
      const response = await raw('POST', '/authenticators', body);
      return readBack(`/authenticators/${response.body?.data?.id}`, 'tags', response.status);
    },
  },
];

describe('free-form maps keep every key as data', () => {
  for (const route of routes) {
    it(`${route.name}: any keys are stored and returned as sent`, async () => {
      await fc.assert(
        fc.asyncProperty(mapJson(route.value), async (mapText) => {
          const { status, stored } = await route.write(mapText);
          expect(status).toBeLessThan(300);
          const sent = JSON.parse(mapText) as Record<string, unknown>;
          expect(Object.entries(stored as object).sort()).toEqual(Object.entries(sent).sort());
        }),
        { numRuns: 6 },
      );
    });
  }

  it('keeps any JSON under appData keys: numbers, nested objects, arrays', async () => {
    const appData = { count: 3, ratio: 0.5, nested: { list: [1, 'two', { three: null }], flag: false }, empty: [] };

    const id = await createdId('/identities', { name: unique('app-data'), type: 'User', isAdmin: false, appData });
    const detail = await call('GET', `/identities/${id}`);

    expect(detail.body.data.appData).toEqual(appData);
  });

  it('takes maps up to the cap and refuses larger ones with a 400 naming the field', async () => {
    const sized = (bytes: number) => `{"k":${JSON.stringify('x'.repeat(bytes - 8))}}`;
    const [tags, appData] = [routes[0]!, routes[3]!];

    const atCap = await tags.write(sized(MAX_MAP_BYTES));
    const overCap = await raw(
      'POST',
      '/identities',
      `{"name":"too-big","type":"User","isAdmin":false,"appData":${sized(MAX_MAP_BYTES + 1)}}`,
    );
    const nearAtCapBoth = await appData.write(sized(MAX_MAP_BYTES - 10));

    expect(atCap.status).toBe(201);
    expect(overCap.status).toBe(400);
    expect(overCap.body.error.cause.field).toBe('appData');
    expect(nearAtCapBoth.status).toBeLessThan(300);
  });

  it('refuses 450 KB of tags inside the body limit with a 400, not a 500', async () => {
    const tags = Object.fromEntries(Array.from({ length: 450 }, (_, i) => [`t${i}`, 'x'.repeat(1000)]));

    const response = await call('POST', '/identities', { name: 'huge-tags', type: 'User', isAdmin: false, tags });

    expectCouldNotValidate(response, 'tags', { api: 'management', method: 'POST', path: '/identities' });
  });

  it('has the kit refuse any entity too large for one stored item, naming its largest field', () => {
    const now = new Date().toISOString();
    const identity = newIdentity({ id: 'oversized', name: 'n'.repeat(400_000), createdAt: now });

    const attempt = () => controller().deps.store.createOps(identities, identity);

    expect(attempt).toThrow(ApiError);
    expect(attempt).toThrow(
      expect.objectContaining({ status: 400, apiCause: expect.objectContaining({ field: 'name' }) }),
    );
  });
});
