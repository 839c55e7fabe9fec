import { describe, expect, it } from 'vitest';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';

const { call, createdId } = useAdminController();

/**
 * Posture checks are one discriminated declaration (`typeId`): the kit checks each body against the variant it names,
 * or on an update the stored one, before the check's mapping sees it.
 */
describe('posture check type fields', () => {
  it.each([
    ['MAC', { macAddresses: ['001a2b3c4d5e'], domains: ['corp.example'] }, 'domains', 'domains is not a field of MAC'],
    ['DOMAIN', { domains: ['corp.example'], timeoutSeconds: 60 }, 'timeoutSeconds', 'timeoutSeconds is not a field'],
    ['MFA', { process: { osType: 'Linux', path: '/bin/x' } }, 'process', 'process is not a field of MFA'],
    ['OS', {}, 'operatingSystems', 'operatingSystems is required for OS posture checks'],
    ['PROCESS_MULTI', { processes: [{ osType: 'Linux', path: '/bin/x' }] }, 'semantic', 'semantic is required'],
  ])('refuses a %s check whose fields are %j: 400 on %s', async (typeId, fields, field, reason) => {
    const response = await call('POST', '/posture-checks', { name: `pcv-${typeId}-${field}`, typeId, ...fields });

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('COULD_NOT_VALIDATE');
    expect(response.body.error.cause).toMatchObject({ field, reason: expect.stringContaining(reason) });
    expectMatchesSpec('management', 'POST', '/posture-checks', 400, response.body);
  });

  it('checks a replace against the stored type, whatever type the body names', async () => {
    const id = await createdId('/posture-checks', { name: 'pcv-put', typeId: 'MAC', macAddresses: ['001a2b3c4d5e'] });

    const otherType = await call('PUT', `/posture-checks/${id}`, { name: 'pcv-put', typeId: 'DOMAIN', domains: ['x'] });
    const foreign = await call('PUT', `/posture-checks/${id}`, { name: 'pcv-put', domains: ['x'] });

    expect(otherType.status).toBe(400);
    expect(otherType.body.error.cause).toMatchObject({ field: 'typeId', value: 'DOMAIN' });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.cause).toMatchObject({
      field: 'domains',
      reason: 'domains is not a field of MAC posture checks',
    });
  });

  it('patches an MFA flag and keeps the other type fields as stored', async () => {
    const id = await createdId('/posture-checks', {
      name: 'pcv-mfa',
      typeId: 'MFA',
      timeoutSeconds: 120,
      promptOnUnlock: true,
    });

    const response = await call('PATCH', `/posture-checks/${id}`, { typeId: 'MFA', promptOnWake: true });
    const check = (await call('GET', `/posture-checks/${id}`)).body.data;

    expect(response.status).toBe(200);
    expect(check).toMatchObject({
      timeoutSeconds: 120,
      promptOnUnlock: true,
      promptOnWake: true,
      ignoreLegacyEndpoints: false,
      version: 2,
    });
  });

  it('refuses a patch that clears a required field or names another type, and leaves the check as it was', async () => {
    const id = await createdId('/posture-checks', {
      name: 'pcv-process',
      typeId: 'PROCESS',
      process: { osType: 'Linux', path: '/bin/agent' },
    });

    const cleared = await call('PATCH', `/posture-checks/${id}`, { typeId: 'PROCESS', process: null });
    const renamedType = await call('PATCH', `/posture-checks/${id}`, { typeId: 'OS', operatingSystems: [] });

    expect(cleared.status).toBe(400);
    expect(cleared.body.error.cause).toMatchObject({
      field: 'process',
      reason: 'process is required for PROCESS posture checks',
    });
    expect(renamedType.status).toBe(400);
    expect(renamedType.body.error.cause.field).toBe('typeId');
    expect((await call('GET', `/posture-checks/${id}`)).body.data).toMatchObject({
      version: 1,
      process: { path: '/bin/agent' },
    });
  });
});
