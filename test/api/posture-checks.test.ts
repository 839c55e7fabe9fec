import { Ajv } from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import { CHECKED_FORMATS, UNCHECKED_FORMAT } from '../contract/formats.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { loadSpec } from '../contract/spec-source.ts';
import { collectFormats, definitionsDocument } from '../contract/swagger-schema.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { expectCouldNotValidate } from '../support/expect-could-not-validate.ts';

const { controller, call, createdId } = useAdminController();

const SHA512 = 'AB'.repeat(64);
const SHA1 = 'cd'.repeat(20);

/** A valid body of each type, with its own fields. */
const BODIES: Record<string, Record<string, unknown>> = {
  DOMAIN: { typeId: 'DOMAIN', domains: ['corp.example.com'] },
  MAC: { typeId: 'MAC', macAddresses: ['00:1A:2B:3C:4D:5E'] },
  OS: { typeId: 'OS', operatingSystems: [{ type: 'Windows', versions: ['>=10.0.19041'] }, { type: 'Linux' }] },
  PROCESS: { typeId: 'PROCESS', process: { osType: 'Windows', path: 'C:\\agent.exe', hashes: [SHA512] } },
  PROCESS_MULTI: {
    typeId: 'PROCESS_MULTI',
    semantic: 'AnyOf',
    processes: [{ osType: 'Linux', path: '/usr/bin/agent', signerFingerprints: [SHA1] }],
  },
  MFA: { typeId: 'MFA', timeoutSeconds: 300, promptOnWake: true },
};

const COMMON_FIELDS = ['_links', 'createdAt', 'id', 'name', 'roleAttributes', 'tags', 'typeId', 'updatedAt', 'version'];
const TYPE_FIELDS: Record<string, string[]> = {
  DOMAIN: ['domains'],
  MAC: ['macAddresses'],
  OS: ['operatingSystems'],
  PROCESS: ['process'],
  PROCESS_MULTI: ['processes', 'semantic'],
  MFA: ['ignoreLegacyEndpoints', 'promptOnUnlock', 'promptOnWake', 'timeoutSeconds'],
};

/**
 * The document's detail of each check type (the list and detail envelopes name only the base, whose `discriminator`
 * the contract harness does not follow).
 */
const DETAIL_DEFINITION: Record<string, string> = {
  DOMAIN: 'postureCheckDomainDetail',
  MAC: 'postureCheckMacAddressDetail',
  OS: 'postureCheckOperatingSystemDetail',
  PROCESS: 'postureCheckProcessDetail',
  PROCESS_MULTI: 'postureCheckProcessMultiDetail',
  MFA: 'postureCheckMfaDetail',
};
const DOC_ID = 'https://openziti.io/edge-api/management-posture-checks.json';
let ajv: Ajv | undefined;

/** Every way a check's detail differs from its type's detail definition, tags aside (see `SPEC_WINS`). */
function typeDetailMismatches(detail: { typeId: string }): string[] {
  if (!ajv) {
    const doc = loadSpec('management');
    ajv = new Ajv({ allErrors: true, strict: false });
    for (const [name, check] of Object.entries(CHECKED_FORMATS)) ajv.addFormat(name, check);
    for (const name of collectFormats(doc.definitions)) {
      if (!(name in CHECKED_FORMATS)) ajv.addFormat(name, UNCHECKED_FORMAT);
    }
    ajv.addSchema(definitionsDocument(doc.definitions, DOC_ID));
  }
  const validate = ajv.getSchema(`${DOC_ID}#/definitions/${DETAIL_DEFINITION[detail.typeId]}`);
  if (!validate) throw new Error(`no detail definition for ${detail.typeId}`);
  if (validate(detail)) return [];
  return (validate.errors ?? [])
    .filter((error) => error.instancePath !== '/tags' && !error.instancePath.startsWith('/tags/'))
    .map((error) => `${error.instancePath || '(root)'}: ${error.message}`);
}

const body = (name: string, typeId: string, extra: Record<string, unknown> = {}) => ({
  name,
  ...BODIES[typeId],
  ...extra,
});
const detail = async (id: string) => (await call('GET', `/posture-checks/${id}`)).body.data;

describe('posture check types', () => {
  it('lists the seeded types with their operating systems', async () => {
    const list = await call('GET', '/posture-check-types?limit=100');
    const os = await call('GET', '/posture-check-types/OS');

    expect(list.status).toBe(200);
    expect(list.body.data.map((type: { id: string }) => type.id).sort()).toEqual([
      'DOMAIN',
      'MAC',
      'OS',
      'PROCESS',
      'PROCESS_MULTI',
    ]);
    expectMatchesSpec('management', 'GET', '/posture-check-types', 200, list.body);
    expect(os.body.data).toMatchObject({ id: 'OS', name: 'Operating System Check' });
    expect(os.body.data.operatingSystems.map((entry: { type: string }) => entry.type)).toEqual([
      'Windows',
      'Linux',
      'Android',
      'macOS',
      'iOS',
    ]);
    expect(os.body.data.operatingSystems[0].versions).toEqual(['Vista', '7', '8', '10', '2000']);
    expectMatchesSpec('management', 'GET', '/posture-check-types/{id}', 200, os.body);
  });

  it('answers 404 for an unknown type and has no way to write one', async () => {
    const missing = await call('GET', '/posture-check-types/NOPE');
    const post = await call('POST', '/posture-check-types', { name: 'x' });

    expect(missing.status).toBe(404);
    expectMatchesSpec('management', 'GET', '/posture-check-types/{id}', 404, missing.body);
    expect(post.status).toBeGreaterThanOrEqual(404);
    expect(post.status).toBeLessThan(500);
  });

  it('filters the types', async () => {
    const list = await call('GET', `/posture-check-types?filter=${encodeURIComponent('name contains "Process"')}`);

    expect(list.body.data.map((type: { id: string }) => type.id).sort()).toEqual(['PROCESS', 'PROCESS_MULTI']);
  });
});

describe('posture checks of every type', () => {
  it.each(Object.keys(BODIES))('creates, shows, replaces, patches and deletes a %s check', async (typeId) => {
    const created = await call('POST', '/posture-checks', body(`crud-${typeId}`, typeId, { roleAttributes: ['a'] }));
    expect(created.status).toBe(201);
    expectMatchesSpec('management', 'POST', '/posture-checks', 201, created.body);
    const id = created.body.data.id as string;

    const shown = await call('GET', `/posture-checks/${id}`);
    expectMatchesSpec('management', 'GET', '/posture-checks/{id}', 200, shown.body);
    expect(shown.body.data).toMatchObject({ id, name: `crud-${typeId}`, typeId, version: 1, roleAttributes: ['a'] });
    expect(typeDetailMismatches(shown.body.data)).toEqual([]);

    const replaced = await call('PUT', `/posture-checks/${id}`, body(`crud-${typeId}-2`, typeId, { tags: { k: 'v' } }));
    expect(replaced.status).toBe(200);
    expectMatchesSpec('management', 'PUT', '/posture-checks/{id}', 200, replaced.body);
    expect(await detail(id)).toMatchObject({
      name: `crud-${typeId}-2`,
      version: 2,
      roleAttributes: [],
      tags: { k: 'v' },
    });

    const patched = await call('PATCH', `/posture-checks/${id}`, { typeId, roleAttributes: ['b'] });
    expect(patched.status).toBe(200);
    expectMatchesSpec('management', 'PATCH', '/posture-checks/{id}', 200, patched.body);
    const after = await detail(id);
    expect(after).toMatchObject({ name: `crud-${typeId}-2`, version: 3, roleAttributes: ['b'], tags: { k: 'v' } });
    expect(Object.keys(after).sort()).toEqual([...COMMON_FIELDS, ...TYPE_FIELDS[typeId]!].sort());
    expect(typeDetailMismatches(after)).toEqual([]);

    const deleted = await call('DELETE', `/posture-checks/${id}`);
    expect(deleted.status).toBe(200);
    expectMatchesSpec('management', 'DELETE', '/posture-checks/{id}', 200, deleted.body);
    const gone = await call('GET', `/posture-checks/${id}`);
    expect(gone.status).toBe(404);
    expectMatchesSpec('management', 'GET', '/posture-checks/{id}', 404, gone.body);
  });

  it('shows each type with its own fields, normalised as the reference stores them', async () => {
    const ids = Object.fromEntries(
      await Promise.all(
        Object.keys(BODIES).map(async (typeId) => [
          typeId,
          await createdId('/posture-checks', body(`shape-${typeId}`, typeId)),
        ]),
      ),
    );

    expect(await detail(ids.DOMAIN)).toMatchObject({ domains: ['corp.example.com'] });
    expect(await detail(ids.MAC)).toMatchObject({ macAddresses: ['001a2b3c4d5e'] });
    expect((await detail(ids.OS)).operatingSystems).toEqual([
      { type: 'Windows', versions: ['>=10.0.19041'] },
      { type: 'Linux', versions: [] },
    ]);
    expect((await detail(ids.PROCESS)).process).toEqual({
      osType: 'Windows',
      path: 'C:\\agent.exe',
      hashes: [SHA512.toLowerCase()],
      signerFingerprint: '',
    });
    expect(await detail(ids.PROCESS_MULTI)).toMatchObject({
      semantic: 'AnyOf',
      processes: [{ osType: 'Linux', path: '/usr/bin/agent', hashes: [], signerFingerprints: [SHA1] }],
    });
    expect(await detail(ids.MFA)).toMatchObject({
      timeoutSeconds: 300,
      promptOnWake: true,
      promptOnUnlock: false,
      ignoreLegacyEndpoints: false,
    });
    expect(await detail(ids.DOMAIN)).not.toHaveProperty('macAddresses');
  });

  it('keeps an MFA check without a timeout at -1, and a patch changes only the flags it sends', async () => {
    const id = await createdId('/posture-checks', { name: 'mfa-defaults', typeId: 'MFA', timeoutSeconds: 0 });

    expect(await detail(id)).toMatchObject({ timeoutSeconds: -1, promptOnWake: false });
    await call('PATCH', `/posture-checks/${id}`, { typeId: 'MFA', promptOnUnlock: true, timeoutSeconds: 60 });
    expect(await detail(id)).toMatchObject({ timeoutSeconds: 60, promptOnUnlock: true, promptOnWake: false });
    await call('PATCH', `/posture-checks/${id}`, { typeId: 'MFA', timeoutSeconds: null });
    expect(await detail(id)).toMatchObject({ timeoutSeconds: -1, promptOnUnlock: true });
  });

  it('patches single fields of a process, as the ziti CLI does', async () => {
    const id = await createdId('/posture-checks', body('cli-process', 'PROCESS'));
    const colons = SHA1.toUpperCase().replace(/(..)(?!$)/g, '$1:');

    const hashes = await call('PATCH', `/posture-checks/${id}`, { typeId: 'PROCESS', process: { hashes: [] } });
    const signer = await call('PATCH', `/posture-checks/${id}`, {
      typeId: 'PROCESS',
      process: { signerFingerprint: colons },
    });
    const path = await call('PATCH', `/posture-checks/${id}`, {
      typeId: 'PROCESS',
      process: { path: 'C:\\other.exe' },
    });
    const badHash = await call('PATCH', `/posture-checks/${id}`, { typeId: 'PROCESS', process: { hashes: ['0'] } });
    const emptyPath = await call('PATCH', `/posture-checks/${id}`, { typeId: 'PROCESS', process: { path: '' } });

    expect([hashes.status, signer.status, path.status]).toEqual([200, 200, 200]);
    expect((await detail(id)).process).toEqual({
      osType: 'Windows',
      path: 'C:\\other.exe',
      hashes: [],
      signerFingerprint: SHA1,
    });
    expect(badHash.body.error.cause.field).toBe('process.hashes.0');
    expect(emptyPath.body.error.cause.field).toBe('process.path');
  });

  it('refuses a process on a check of another type, whole or in part', async () => {
    const id = await createdId('/posture-checks', body('not-a-process', 'DOMAIN'));

    const response = await call('PATCH', `/posture-checks/${id}`, { typeId: 'DOMAIN', process: { path: '/bin/x' } });

    expect(response.status).toBe(400);
    expect(response.body.error.cause.field).toBe('process');
  });

  it('takes the admin console bodies, which carry the fields of every type, blank for the other types', async () => {
    const consoleModel = {
      name: 'console-mac',
      typeId: 'MAC',
      semantic: 'AllOf',
      roleAttributes: [],
      domains: [],
      macAddresses: ['AA:BB:CC:DD:EE:FF'],
      operatingSystems: [],
      processes: [{ hashes: [], osType: '', path: '', signerFingerprints: [] }],
      process: { hashes: [], osType: '', path: '', signerFingerprint: '' },
      timeoutSeconds: 0,
      tags: {},
    };

    const id = await createdId('/posture-checks', consoleModel);
    const patched = await call('PATCH', `/posture-checks/${id}`, {
      ...consoleModel,
      id,
      macAddresses: ['AA:BB:CC:DD:EE:00'],
    });

    expect(patched.status).toBe(200);
    const check = await detail(id);
    expect(check).toMatchObject({ typeId: 'MAC', macAddresses: ['aabbccddee00'], version: 2 });
    expect(check).not.toHaveProperty('semantic');
    expect(check).not.toHaveProperty('domains');
  });

  it('patches a type field of its own type and keeps the rest', async () => {
    const id = await createdId('/posture-checks', body('patch-domains', 'DOMAIN', { tags: { keep: true } }));

    const patched = await call('PATCH', `/posture-checks/${id}`, {
      typeId: 'DOMAIN',
      domains: ['a.example', 'b.example'],
    });

    expect(patched.status).toBe(200);
    expect(await detail(id)).toMatchObject({
      name: 'patch-domains',
      domains: ['a.example', 'b.example'],
      tags: { keep: true },
      version: 2,
    });
  });
});

describe('posture check validation', () => {
  it.each([
    ['no name', { typeId: 'DOMAIN', domains: ['x'] }, 'name'],
    ['no typeId', { name: 'v1', domains: ['x'] }, 'typeId'],
    ['an unknown typeId', { name: 'v2', typeId: 'BIOMETRIC' }, 'typeId'],
    ['a DOMAIN check without domains', { name: 'v3', typeId: 'DOMAIN' }, 'domains'],
    ['an empty domain list', { name: 'v4', typeId: 'DOMAIN', domains: [] }, 'domains'],
    ['a field of another type', { ...body('v5', 'DOMAIN'), macAddresses: ['001a2b3c4d5e'] }, 'macAddresses'],
    ['an MFA field on an OS check', { ...body('v6', 'OS'), promptOnWake: true }, 'promptOnWake'],
    ['a malformed MAC address', body('v7', 'MAC', { macAddresses: ['00:1A:2B:3C:4D'] }), 'macAddresses.0'],
    [
      'an unknown OS type',
      body('v8', 'OS', { operatingSystems: [{ type: 'BeOS', versions: [] }] }),
      'operatingSystems.0.type',
    ],
    [
      'an OS listed twice',
      body('v9', 'OS', { operatingSystems: [{ type: 'Linux' }, { type: 'Linux', versions: ['5.x'] }] }),
      'operatingSystems.1',
    ],
    ['a process without a path', body('v10', 'PROCESS', { process: { osType: 'Linux' } }), 'process.path'],
    [
      'a process hash that is not SHA-512',
      body('v11', 'PROCESS', { process: { osType: 'Linux', path: '/bin/x', hashes: ['abc'] } }),
      'process.hashes.0',
    ],
    [
      'a signer fingerprint that is not SHA-1',
      body('v12', 'PROCESS', { process: { osType: 'Linux', path: '/bin/x', signerFingerprint: 'zz' } }),
      'process.signerFingerprint',
    ],
    [
      'a process check on a phone',
      body('v13', 'PROCESS', { process: { osType: 'iOS', path: '/bin/x' } }),
      'process.osType',
    ],
    ['a multi-process check without a semantic', body('v14', 'PROCESS_MULTI', { semantic: undefined }), 'semantic'],
    ['an unknown semantic', body('v15', 'PROCESS_MULTI', { semantic: 'Most' }), 'semantic'],
    [
      'a process listed twice',
      body('v16', 'PROCESS_MULTI', {
        processes: [
          { osType: 'Linux', path: '/bin/x' },
          { osType: 'Linux', path: '/bin/x' },
        ],
      }),
      'processes.1',
    ],
    [
      'a malformed signer fingerprint in a list',
      body('v17', 'PROCESS_MULTI', { processes: [{ osType: 'Linux', path: '/bin/x', signerFingerprints: ['x'] }] }),
      'processes.0.signerFingerprints.0',
    ],
    ['a timeout that is not an integer', body('v18', 'MFA', { timeoutSeconds: 1.5 }), 'timeoutSeconds'],
    ['a flag that is not a boolean', body('v19', 'MFA', { promptOnWake: 'yes' }), 'promptOnWake'],
    ['a role attribute that is a role', body('v20', 'MFA', { roleAttributes: ['#a'] }), 'roleAttributes.0'],
  ])('answers 400 COULD_NOT_VALIDATE for %s', async (_case, requestBody, field) => {
    const response = await call('POST', '/posture-checks', requestBody);

    expectCouldNotValidate(response, field, { api: 'management', method: 'POST', path: '/posture-checks' });
  });

  it('refuses a duplicate name', async () => {
    await createdId('/posture-checks', body('twice', 'MFA'));

    const response = await call('POST', '/posture-checks', body('twice', 'DOMAIN'));

    expect(response.status).toBe(400);
    expect(response.body.error.cause.field).toBe('name');
  });

  it('never changes the type of a check, by replace or patch', async () => {
    const id = await createdId('/posture-checks', body('fixed-type', 'DOMAIN'));

    const replaced = await call('PUT', `/posture-checks/${id}`, body('fixed-type', 'MAC'));
    const patched = await call('PATCH', `/posture-checks/${id}`, { typeId: 'MFA', promptOnWake: true });
    const foreign = await call('PATCH', `/posture-checks/${id}`, { typeId: 'DOMAIN', macAddresses: ['001a2b3c4d5e'] });
    const cleared = await call('PATCH', `/posture-checks/${id}`, { typeId: 'DOMAIN', domains: null });

    expect([replaced.status, patched.status, foreign.status, cleared.status]).toEqual([400, 400, 400, 400]);
    expect(replaced.body.error.cause.field).toBe('typeId');
    expectMatchesSpec('management', 'PUT', '/posture-checks/{id}', 400, replaced.body);
    expect(patched.body.error.cause.field).toBe('typeId');
    expectMatchesSpec('management', 'PATCH', '/posture-checks/{id}', 400, patched.body);
    expect(foreign.body.error.cause.field).toBe('macAddresses');
    expect(cleared.body.error.cause.field).toBe('domains');
    expect(await detail(id)).toMatchObject({ typeId: 'DOMAIN', domains: ['corp.example.com'], version: 1 });
  });

  it('replaces by the stored type when the body does not name one, and requires its fields', async () => {
    const id = await createdId('/posture-checks', body('untyped-put', 'MAC'));

    const missing = await call('PUT', `/posture-checks/${id}`, { name: 'untyped-put' });
    const ok = await call('PUT', `/posture-checks/${id}`, { name: 'untyped-put', macAddresses: ['aa-bb-cc-dd-ee-ff'] });

    expect(missing.status).toBe(400);
    expect(missing.body.error.cause.field).toBe('macAddresses');
    expect(ok.status).toBe(200);
    expect(await detail(id)).toMatchObject({ macAddresses: ['aabbccddeeff'], version: 2 });
  });

  it('requires the typeId on a patch', async () => {
    const id = await createdId('/posture-checks', body('patch-needs-type', 'MFA'));

    const response = await call('PATCH', `/posture-checks/${id}`, { name: 'renamed' });

    expect(response.status).toBe(400);
    expect(response.body.error.cause.field).toBe('typeId');
  });

  it('answers 404 for an unknown check on every verb', async () => {
    const responses = await Promise.all([
      call('GET', '/posture-checks/nope'),
      call('PUT', '/posture-checks/nope', body('nope', 'MFA')),
      call('PATCH', '/posture-checks/nope', { typeId: 'MFA' }),
      call('DELETE', '/posture-checks/nope'),
    ]);

    expect(responses.map((response) => response.status)).toEqual([404, 404, 404, 404]);
    expectMatchesSpec('management', 'DELETE', '/posture-checks/{id}', 404, responses[3]!.body);
  });

  it('is for admins only', async () => {
    const anonymous = await controller().call('GET', '/edge/management/v1/posture-checks');

    expect(anonymous.status).toBe(401);
  });
});

describe('posture check lists', () => {
  const ids = new Map<string, string>();
  beforeAll(async () => {
    const specs: [string, string, string[]][] = [
      ['list-a', 'DOMAIN', ['pc-eng', 'pc-emea']],
      ['list-b', 'MAC', ['pc-eng']],
      ['list-c', 'MFA', ['pc-sales', 'pc-emea']],
      ['list-d', 'OS', []],
    ];
    for (const [name, typeId, roleAttributes] of specs) {
      ids.set(name, await createdId('/posture-checks', body(name, typeId, { roleAttributes })));
    }
  });
  const names = (response: { body: { data: { name: string }[] } }) => response.body.data.map((check) => check.name);
  const list = (query: string) => call('GET', `/posture-checks?${query}`);
  const filter = (text: string) => `filter=${encodeURIComponent(text)}`;

  it('filters, sorts and pages', async () => {
    const byType = await list(`${filter('typeId = "MFA" and name contains "list-"')}`);
    const sorted = await list(
      `${filter('name contains "list-"')}&sort=${encodeURIComponent('name desc')}&limit=2&offset=1`,
    );

    const byFlag = await list(`${filter('promptOnWake = true and name contains "list-"')}`);

    expect(names(byType)).toEqual(['list-c']);
    expect(names(byFlag)).toEqual(['list-c']);
    expectMatchesSpec('management', 'GET', '/posture-checks', 200, byType.body);
    expect(names(sorted)).toEqual(['list-c', 'list-b']);
    expect(sorted.body.meta.pagination).toEqual({ limit: 2, offset: 1, totalCount: 4 });
    expect(sorted.body.meta.filterableFields).toEqual(expect.arrayContaining(['name', 'typeId', 'roleAttributes']));
  });

  it('filters by role attributes with roleFilter and roleSemantic', async () => {
    const allOf = await list(
      `roleFilter=${encodeURIComponent('#pc-eng')}&roleFilter=${encodeURIComponent('#pc-emea')}`,
    );
    const anyOf = await list(
      `roleFilter=${encodeURIComponent('#pc-sales')}&roleFilter=${encodeURIComponent(`@${ids.get('list-d')}`)}&roleSemantic=AnyOf`,
    );

    expect(names(allOf)).toEqual(['list-a']);
    expect(names(anyOf).sort()).toEqual(['list-c', 'list-d']);
    expect((await list('roleFilter=pc-eng')).status).toBe(400);
  });

  it('lists the role attributes in use', async () => {
    const all = await call('GET', `/posture-check-role-attributes?${filter('id contains "pc-"')}`);

    expect(all.status).toBe(200);
    expect(all.body.data).toEqual(['pc-emea', 'pc-eng', 'pc-sales']);
    expectMatchesSpec('management', 'GET', '/posture-check-role-attributes', 200, all.body);
  });

  it('refuses a filter on an unknown field', async () => {
    const response = await list(filter('colour = "red"'));

    expect(response.status).toBe(400);
    expectMatchesSpec('management', 'GET', '/posture-checks', 400, response.body);
  });

  it('counts posture checks and their types in the summary', async () => {
    const summary = await call('GET', '/summary');

    expect(summary.body.data.postureCheckTypes).toBe(5);
    expect(summary.body.data.postureChecks).toBeGreaterThanOrEqual(4);
  });
});
