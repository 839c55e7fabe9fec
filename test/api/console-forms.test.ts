import { describe, expect, it } from 'vitest';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { makeCa } from '../support/pki-fixtures.ts';

/**
 * The bodies the admin console (ZAC 4.5.2, openziti/ziti-console `projects/ziti-console-lib/src/lib/`) sends when an
 * admin saves a form, copied from the code that builds them: each form copies the keys of its model class
 * (`models/*.ts`) from the form's data, so a box left empty arrives as `""` and a cleared number box as `null`.
 */
const { call, createdId } = useAdminController();

const INTERCEPT_V1 = 'g7cIWbcGg';
const HOST_V1 = 'NH5p4FpGR';

/** What a browser puts on the wire for ZAC's unencoded list URLs (spaces and quotes percent-encoded). */
const asSent = (path: string) => encodeURI(path);

describe('the admin console forms', () => {
  describe('service form: the configs of the picked config type', () => {
    it('lists exactly that type configs for filter=type = "<id>", as the service form asks', async () => {
      const picked = await createdId('/config-types', { name: 'zac-picked-type', schema: {} });
      const other = await createdId('/config-types', { name: 'zac-other-type', schema: {} });
      const wanted = [
        await createdId('/configs', { name: 'zac-cfg-b', configTypeId: picked, data: { n: 2 } }),
        await createdId('/configs', { name: 'zac-cfg-a', configTypeId: picked, data: { n: 1 } }),
      ];
      await createdId('/configs', { name: 'zac-cfg-other', configTypeId: other, data: {} });

      // service-form.component.ts configTypeChanged(): {columnId: 'type', verb: '=', type: 'TEXTINPUT'}, through
      // ziti-controller-data.service.ts getUrlFilter() with the service form's paging (100 a page, by name).
      const listed = await call('GET', asSent(`/configs?filter= type = "${picked}"&limit=100&offset=0&sort=name  asc`));

      expect(listed.status, listed.text).toBe(200);
      expect(listed.body.data.map((config: { id: string }) => config.id)).toEqual([wanted[1], wanted[0]]);
      expect(listed.body.data.map((config: { configTypeId: string }) => config.configTypeId)).toEqual([picked, picked]);
      expect(listed.body.meta.pagination.totalCount).toBe(2);
      expect(listed.body.meta.filterableFields).toEqual(expect.arrayContaining(['type', 'configTypeId']));
      expectMatchesSpec('management', 'GET', '/configs', 200, listed.body);
    });

    it('combines it with the name search (configFilterChanged), and sorts by type', async () => {
      const hostConfig = await createdId('/configs', {
        name: 'zac-sort-host',
        configTypeId: HOST_V1,
        data: { protocol: 'tcp', address: 'localhost', port: 8080 },
      });
      const interceptConfig = await createdId('/configs', {
        name: 'zac-sort-intercept',
        configTypeId: INTERCEPT_V1,
        data: { protocols: ['tcp'], addresses: ['sort.ziti'], portRanges: [{ low: 80, high: 80 }] },
      });

      const named = await call(
        'GET',
        asSent(`/configs?filter= name icontains "ZAC-SORT" and type = "${HOST_V1}"&limit=100&offset=0&sort=name  asc`),
      );
      const sortedInFilter = await call('GET', asSent('/configs?filter=name icontains "zac-sort" sort by type desc'));
      const sortedByParameter = await call('GET', asSent('/configs?filter=name icontains "zac-sort"&sort=type asc'));

      expect(named.status, named.text).toBe(200);
      expect(named.body.data.map((config: { id: string }) => config.id)).toEqual([hostConfig]);
      // The ids of the two built-in types order intercept.v1 (g7cIWbcGg) after host.v1 (NH5p4FpGR).
      expect(sortedInFilter.body.data.map((config: { id: string }) => config.id)).toEqual([
        interceptConfig,
        hostConfig,
      ]);
      expect(sortedByParameter.body.data.map((config: { id: string }) => config.id)).toEqual([
        hostConfig,
        interceptConfig,
      ]);
    });

    it('still refuses a type compared with something that is no config type id', async () => {
      const listed = await call('GET', asSent('/configs?filter=type = 1'));

      expect(listed.status).toBe(400);
      expect(listed.body.error.code).toBe('INVALID_FILTER');
      expect(listed.body.error.cause.reason).toContain('type');
    });
  });

  describe('JWT signer form', () => {
    // jwt-signer-form.component.ts `get apiData()` for a new signer in JWKS mode, through
    // jwt-signer-form.service.ts getJwtSignerDataModel() (the keys of models/jwt-signer.ts; certPem is undefined).
    const jwksBody = {
      name: 'zac-jwks-signer',
      audience: '',
      issuer: 'https://zac-idp.example.com',
      clientId: '',
      claimsProperty: '',
      enabled: true,
      useExternalId: false,
      externalAuthUrl: '',
      kid: '',
      scopes: [],
      jwksEndpoint: 'https://zac-idp.example.com/.well-known/jwks.json',
      tags: {},
      targetToken: 'ACCESS',
      enrollToCertEnabled: false,
      enrollToTokenEnabled: false,
    };

    it('saves a blank claims property, kid, audience and external auth URL as the reference stores them', async () => {
      const created = await call('POST', '/external-jwt-signers', jwksBody);
      const detail = await call('GET', `/external-jwt-signers/${created.body.data.id}`);

      expect(created.status, created.text).toBe(201);
      expect(detail.body.data).toMatchObject({
        name: 'zac-jwks-signer',
        claimsProperty: 'sub',
        kid: null,
        audience: null,
        externalAuthUrl: null,
        clientId: '',
        jwksEndpoint: 'https://zac-idp.example.com/.well-known/jwks.json',
        certPem: null,
        useExternalId: false,
        targetToken: 'ACCESS',
      });
    });

    it('takes the same blanks in the update the form sends (PUT) and in a patch', async () => {
      const ca = await makeCa('zac signer key');
      // CERT_PEM mode: jwksEndpoint is undefined, the PEM and its kid filled in.
      const id = await createdId('/external-jwt-signers', {
        ...jwksBody,
        name: 'zac-cert-signer',
        issuer: 'https://zac-cert-idp.example.com',
        jwksEndpoint: undefined,
        certPem: ca.pem,
        kid: 'zac-kid',
        claimsProperty: 'email',
        useExternalId: true,
      });

      // The edit form re-sends what it read, its nulls as "" (`this.formData.audience || ''`), the claims property
      // emptied by the admin.
      const updated = await call('PUT', `/external-jwt-signers/${id}`, {
        ...jwksBody,
        name: 'zac-cert-signer',
        issuer: 'https://zac-cert-idp.example.com',
        jwksEndpoint: undefined,
        certPem: ca.pem,
        kid: 'zac-kid',
      });
      const afterPut = await call('GET', `/external-jwt-signers/${id}`);
      await call('PATCH', `/external-jwt-signers/${id}`, { claimsProperty: 'email' });
      const patched = await call('PATCH', `/external-jwt-signers/${id}`, { claimsProperty: '', externalAuthUrl: '' });
      const afterPatch = await call('GET', `/external-jwt-signers/${id}`);

      expect(updated.status, updated.text).toBe(200);
      expect(afterPut.body.data).toMatchObject({ claimsProperty: 'sub', kid: 'zac-kid', audience: null });
      expect(patched.status, patched.text).toBe(200);
      expect(afterPatch.body.data).toMatchObject({ claimsProperty: 'sub', externalAuthUrl: null, kid: 'zac-kid' });
    });

    it('still needs the kid of a certificate signer', async () => {
      const ca = await makeCa('zac signer without kid');

      const created = await call('POST', '/external-jwt-signers', {
        ...jwksBody,
        name: 'zac-no-kid',
        issuer: 'https://zac-no-kid.example.com',
        jwksEndpoint: undefined,
        certPem: ca.pem,
      });

      expect(created.status).toBe(400);
      expect(created.body.error.cause.field).toBe('kid');
    });
  });

  describe('CA form', () => {
    it('saves a blank identity name format as the default [caName]-[commonName] (create, update, patch)', async () => {
      const ca = await makeCa('zac form root');
      // certificate-authority-form.component.ts `get apiData()` plus `apiData.id = this.formData.id`, through
      // certificate-authority-form.service.ts (the keys of models/certificate-authority.ts).
      const createBody = {
        name: 'zac-ca',
        id: '',
        isAutoCaEnrollmentEnabled: false,
        isOttCaEnrollmentEnabled: false,
        identityRoles: [],
        identityNameFormat: '',
        isAuthEnabled: false,
        certPem: ca.pem,
        tags: {},
      };

      const created = await call('POST', '/cas', createBody);
      const id = created.body.data.id as string;
      const afterCreate = await call('GET', `/cas/${id}`);
      await call('PATCH', `/cas/${id}`, { identityNameFormat: '[commonName]' });
      const updated = await call('PUT', `/cas/${id}`, { ...createBody, id, isAuthEnabled: true });
      const afterPut = await call('GET', `/cas/${id}`);
      await call('PATCH', `/cas/${id}`, { identityNameFormat: '[commonName]' });
      const patched = await call('PATCH', `/cas/${id}`, { identityNameFormat: '' });
      const afterPatch = await call('GET', `/cas/${id}`);

      expect(created.status, created.text).toBe(201);
      expect(afterCreate.body.data).toMatchObject({ name: 'zac-ca', identityNameFormat: '[caName]-[commonName]' });
      expect(updated.status, updated.text).toBe(200);
      expect(afterPut.body.data).toMatchObject({ isAuthEnabled: true, identityNameFormat: '[caName]-[commonName]' });
      expect(patched.status, patched.text).toBe(200);
      expect(afterPatch.body.data.identityNameFormat).toBe('[caName]-[commonName]');
    });
  });

  describe('identity form', () => {
    // identity-form.service.ts getIdentityDataModel() over models/identity.ts, after the admin picked the policy
    // list's empty choice ("Select an Authentication Policy", value "") and cleared the hosting cost box.
    const createBody = {
      name: 'zac-identity',
      type: 'Device',
      appData: {},
      isAdmin: false,
      roleAttributes: [],
      authPolicyId: '',
      externalId: '',
      defaultHostingCost: null,
      defaultHostingPrecedence: 'default',
      tags: {},
      enrollment: { ott: true },
    };

    it('saves a blank auth policy as the default policy and a cleared hosting cost as 0', async () => {
      const created = await call('POST', '/identities', createBody);
      const detail = await call('GET', `/identities/${created.body.data.id}`);

      expect(created.status, created.text).toBe(201);
      expect(detail.body.data).toMatchObject({
        name: 'zac-identity',
        authPolicyId: 'default',
        externalId: null,
        defaultHostingCost: 0,
        defaultHostingPrecedence: 'default',
      });
    });

    it('takes the same blanks in the edit form patch', async () => {
      const policyId = await createdId('/auth-policies', {
        name: 'zac-identity-policy',
        primary: {
          cert: { allowed: true, allowExpiredCerts: false },
          extJwt: { allowed: false, allowedSigners: [] },
          updb: {
            allowed: true,
            lockoutDurationMinutes: 0,
            maxAttempts: 5,
            minPasswordLength: 5,
            requireMixedCase: false,
            requireNumberChar: false,
            requireSpecialChar: false,
          },
        },
        secondary: { requireTotp: false },
      });
      const id = await createdId('/identities', {
        ...createBody,
        name: 'zac-identity-edit',
        authPolicyId: policyId,
        defaultHostingCost: 7,
      });

      // On update the form sends `type` as the type's id and no enrollment.
      const { enrollment: _enrollment, ...patchBody } = createBody;
      const patched = await call('PATCH', `/identities/${id}`, {
        ...patchBody,
        name: 'zac-identity-edit',
        type: 'Default',
      });
      const detail = await call('GET', `/identities/${id}`);

      expect(patched.status, patched.text).toBe(200);
      expect(detail.body.data).toMatchObject({ authPolicyId: 'default', defaultHostingCost: 0 });
    });
  });

  describe('terminator form', () => {
    it('saves a blank precedence as default', async () => {
      const serviceId = await createdId('/services', { name: 'zac-terminator-service' });
      const routerId = await createdId('/edge-routers', { name: 'zac-terminator-router' });
      // terminator-form.component.ts `get apiData()` for a new terminator (models/terminator.ts keys).
      const created = await call('POST', '/terminators', {
        service: serviceId,
        identity: '',
        router: routerId,
        binding: 'transport',
        precedence: '',
        address: 'tcp:10.0.0.9:443',
        cost: 0,
        identitySecret: '',
      });
      const id = created.body.data.id as string;
      await call('PATCH', `/terminators/${id}`, { precedence: 'required' });
      const patched = await call('PATCH', `/terminators/${id}`, {
        service: serviceId,
        identity: '',
        router: routerId,
        binding: 'transport',
        precedence: '',
        address: 'tcp:10.0.0.9:443',
        cost: 0,
        identitySecret: '',
      });
      const detail = await call('GET', `/terminators/${id}`);

      expect(created.status, created.text).toBe(201);
      expect(patched.status, patched.text).toBe(200);
      expect(detail.body.data).toMatchObject({ precedence: 'default', identity: '', cost: 0 });
    });
  });

  describe('forms that needed no change', () => {
    const postureCheckBody = {
      semantic: 'AllOf',
      roleAttributes: [],
      domains: [],
      macAddresses: [],
      operatingSystems: [],
      processes: [{ hashes: [], osType: '', path: '', signerFingerprints: [] }],
      process: { hashes: [], osType: '', path: '', signerFingerprint: '' },
      promptOnWake: false,
      promptOnUnlock: false,
      timeoutSeconds: 0,
      tags: {},
    };
    const routerBody = {
      roleAttributes: [],
      appData: {},
      isTunnelerEnabled: true,
      noTraversal: false,
      cost: 0,
      tags: {},
    };

    // Each as its form's service builds it from the keys of its model (models/*.ts) for a new entity.
    it.each([
      [
        'service (service-form.service.ts)',
        '/services',
        {
          name: 'zac-service',
          encryptionRequired: true,
          terminatorStrategy: '',
          roleAttributes: [],
          tags: {},
          configs: [],
          maxIdleTimeMillis: 0,
        },
      ],
      [
        'config (configuration.service.ts)',
        '/configs',
        {
          name: 'zac-config',
          data: { protocols: ['tcp'], addresses: ['zac.ziti'], portRanges: [{ low: 443, high: 443 }] },
          configTypeId: INTERCEPT_V1,
          tags: {},
        },
      ],
      ['config type (config-type-form.service.ts)', '/config-types', { name: 'zac-ct', id: '', schema: {}, tags: {} }],
      ['edge router (edge-router-form.service.ts)', '/edge-routers', { name: 'zac-er', ...routerBody }],
      [
        'transit router (transit-router-form.service.ts, a cleared cost)',
        '/transit-routers',
        { name: 'zac-tr', ...routerBody, cost: null },
      ],
      [
        'service policy (service-policy-form.service.ts)',
        '/service-policies',
        {
          name: 'zac-sp',
          serviceRoles: [],
          identityRoles: [],
          postureCheckRoles: [],
          semantic: 'AnyOf',
          type: 'Bind',
          tags: {},
        },
      ],
      [
        'edge router policy (edge-router-policy-form.service.ts)',
        '/edge-router-policies',
        { name: 'zac-erp', edgeRouterRoles: [], identityRoles: [], semantic: 'AnyOf', tags: {} },
      ],
      [
        'service edge router policy (service-edge-router-policy-form.service.ts)',
        '/service-edge-router-policies',
        { name: 'zac-serp', edgeRouterRoles: [], serviceRoles: [], semantic: 'AnyOf', tags: {} },
      ],
      [
        'MFA posture check (posture-check-form.service.ts)',
        '/posture-checks',
        { ...postureCheckBody, name: 'zac-pc-mfa', typeId: 'MFA' },
      ],
      [
        'domain posture check (posture-check-form.service.ts)',
        '/posture-checks',
        { ...postureCheckBody, name: 'zac-pc-domain', typeId: 'DOMAIN', domains: ['zac.example.com'] },
      ],
      [
        'auth policy (auth-policy-form.component.ts apiData)',
        '/auth-policies',
        {
          name: 'zac-ap',
          id: '',
          primary: {
            cert: { allowed: false, allowExpiredCerts: false },
            extJwt: { allowed: false, allowedSigners: [] },
            updb: {
              allowed: false,
              lockoutDurationMinutes: 0,
              maxAttempts: 5,
              minPasswordLength: 5,
              requireMixedCase: false,
              requireNumberChar: false,
              requireSpecialChar: false,
            },
          },
          secondary: { requireTotp: false },
          tags: {},
        },
      ],
    ])('saves the %s body', async (_form, path, body) => {
      const created = await call('POST', path, body);

      expect(created.status, created.text).toBe(201);
    });

    it('refreshes an enrollment with the reset-enrollment body', async () => {
      const identityId = await createdId('/identities', {
        name: 'zac-reissue',
        type: 'Device',
        isAdmin: false,
        enrollment: { ott: true },
      });
      const detail = await call('GET', `/identities/${identityId}`);
      // ziti-controller-data.service.ts reissueEnrollment(): {expiresAt: moment(date).utc().toISOString()}
      const expiresAt = new Date(Date.now() + 2 * 24 * 3600_000).toISOString();

      const refreshed = await call('POST', `/enrollments/${detail.body.data.enrollment.ott.id}/refresh`, { expiresAt });

      expect(refreshed.status, refreshed.text).toBe(200);
    });
  });
});
