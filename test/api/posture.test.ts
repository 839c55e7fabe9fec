import { describe, expect, it } from 'vitest';
import { getApiSessionById, markHasPostureOp } from '#shared/auth/api-session-store.ts';
import {
  failedServiceRequests,
  MAX_FAILED_REQUESTS,
  recordFailedServiceRequest,
} from '#shared/posture/failed-requests.ts';
import { recordMfaPassed } from '#shared/posture/posture-data.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';

const { controller, call, createdId } = useAdminController();

const C = '/edge/client/v1';
const client = (method: string, path: string, token: string, body?: unknown) =>
  controller().call(method, `${C}${path}`, { token, ...(body !== undefined ? { body } : {}) });

const HASH = 'ab'.repeat(64);
const SIGNER = 'cafe0123'.repeat(5);

let counter = 0;
const unique = (name: string) => `${name}-${++counter}-${Date.now().toString(36)}`;

/**
 * A service dialable through one router by identities with the returned attribute, under a policy requiring the
 * posture checks with `checkAttribute`; and a logged-in identity that has it.
 */
async function gated(check: Record<string, unknown>) {
  const tag = unique('pt');
  const checkId = await createdId('/posture-checks', { name: unique('pt-check'), roleAttributes: [tag], ...check });
  const serviceId = await createdId('/services', { name: unique('pt-svc'), roleAttributes: [tag] });
  await createdId('/edge-routers', { name: unique('pt-er'), cost: 1, roleAttributes: [tag] });
  const policyId = await createdId('/service-policies', {
    name: unique('pt-sp'),
    semantic: 'AllOf',
    type: 'Dial',
    identityRoles: [`#${tag}`],
    serviceRoles: [`#${tag}`],
    postureCheckRoles: [`#${tag}`],
  });
  await createdId('/edge-router-policies', {
    name: unique('pt-erp'),
    semantic: 'AnyOf',
    identityRoles: [`#${tag}`],
    edgeRouterRoles: [`#${tag}`],
  });
  await createdId('/service-edge-router-policies', {
    name: unique('pt-serp'),
    semantic: 'AnyOf',
    serviceRoles: [`#${tag}`],
    edgeRouterRoles: [`#${tag}`],
  });
  const name = unique('pt-user');
  const identityId = await createdId('/identities', { name, type: 'User', isAdmin: false, roleAttributes: [tag] });
  await createdId('/authenticators', { identityId, method: 'updb', username: name, password: `${name}-Pw1!` });
  const token = await controller().login(name, `${name}-Pw1!`);
  const respond = (body: unknown) => client('POST', '/posture-response', token, body);
  const dial = async () => (await client('POST', '/sessions', token, { serviceId })).status;
  return { checkId, serviceId, policyId, identityId, token, respond, dial };
}

describe('posture checks evaluated from the endpoint’s responses', () => {
  it('MAC: any reported address of the check’s', async () => {
    const net = await gated({ typeId: 'MAC', macAddresses: ['AA:BB:CC:00:11:22'] });
    expect(await net.dial()).toBe(409);
    await net.respond({ id: net.checkId, typeId: 'MAC', macAddresses: ['00:00:00:00:00:01'] });
    expect(await net.dial()).toBe(409);
    await net.respond({ id: net.checkId, typeId: 'MAC', macAddresses: ['00:00:00:00:00:01', 'aabbcc001122'] });
    expect(await net.dial()).toBe(201);
  });

  it('OS: the type and a version range', async () => {
    const net = await gated({
      typeId: 'OS',
      operatingSystems: [{ type: 'Windows', versions: ['>=10.0.19041 <11.0.0'] }],
    });
    await net.respond({ id: net.checkId, typeId: 'OS', type: 'Windows', version: '10.0.17763' });
    expect(await net.dial()).toBe(409);
    await net.respond({ id: net.checkId, typeId: 'OS', type: 'Linux', version: '10.0.19045' });
    expect(await net.dial()).toBe(409);
    await net.respond({ id: net.checkId, typeId: 'OS', type: 'windows', version: '10.0.19045', build: '3803' });
    expect(await net.dial()).toBe(201);
  });

  it('PROCESS: running, with one of the hashes and the signer', async () => {
    const net = await gated({
      typeId: 'PROCESS',
      process: { osType: 'Linux', path: '/opt/agent', hashes: [HASH.toUpperCase()], signerFingerprint: SIGNER },
    });
    const report = {
      id: net.checkId,
      typeId: 'PROCESS',
      path: '/opt/agent',
      hash: HASH,
      signerFingerprints: [SIGNER.match(/../g)?.join(':')],
    };
    await net.respond({ ...report, isRunning: false });
    expect(await net.dial()).toBe(409);
    await net.respond({ ...report, isRunning: true, hash: '99' });
    expect(await net.dial()).toBe(409);
    await net.respond({ ...report, isRunning: true });
    expect(await net.dial()).toBe(201);
  });

  it('PROCESS_MULTI AllOf: every process, reported by path', async () => {
    const net = await gated({
      typeId: 'PROCESS_MULTI',
      semantic: 'AllOf',
      processes: [
        { osType: 'Linux', path: '/opt/a', hashes: [], signerFingerprints: [] },
        { osType: 'Linux', path: '/opt/b', hashes: [], signerFingerprints: [SIGNER] },
      ],
    });
    const bulk = (body: unknown) => client('POST', '/posture-response-bulk', net.token, body);
    expect((await bulk([{ id: net.checkId, typeId: 'PROCESS', path: '/opt/a', isRunning: true }])).status).toBe(200);
    expect(await net.dial()).toBe(409);
    const both = await bulk([
      {
        id: net.checkId,
        typeId: 'PROCESS',
        path: '/opt/b',
        isRunning: true,
        signerFingerprints: [SIGNER.toUpperCase()],
      },
    ]);
    expect(both.status).toBe(200);
    expect(await net.dial()).toBe(201);
    const data = await call('GET', `/identities/${net.identityId}/posture-data`);
    expectMatchesSpec('management', 'GET', '/identities/{id}/posture-data', 200, data.body);
    expect(data.body.data.processes).toEqual([
      expect.objectContaining({ postureCheckId: net.checkId, isRunning: true, signerFingerprints: [SIGNER] }),
    ]);
  });

  it('MFA: passed on this API session, within the timeout, answered again after a wake', async () => {
    const net = await gated({
      typeId: 'MFA',
      timeoutSeconds: 3600,
      promptOnWake: true,
      promptOnUnlock: false,
      ignoreLegacyEndpoints: false,
    });
    expect(await net.dial()).toBe(409);
    const failures = await call('GET', `/identities/${net.identityId}/failed-service-requests`);
    expectMatchesSpec('management', 'GET', '/identities/{id}/failed-service-requests', 200, failures.body);
    expect(failures.body.data[0].policyFailures[0].checks[0]).toMatchObject({
      postureCheckType: 'MFA',
      actualValue: { passedMfa: false },
      expectedValue: { passedMfa: true, passedOnWake: true },
    });

    // What the MFA operations record when the API session passes MFA.
    const sessionId = (await client('GET', '/current-api-session', net.token)).body.data.id as string;
    const apiSession = await getApiSessionById(controller().deps, sessionId);
    await recordMfaPassed(controller().deps, { identityId: net.identityId, apiSessionId: sessionId }, [
      markHasPostureOp(controller().deps, apiSession?.tokenHash ?? ''),
    ]);
    expect(await net.dial()).toBe(201);

    // Ten minutes on, a wake puts the check on a prompt: the response names the service, and after the grace period
    // the check fails until MFA passes again.
    controller().advanceClock(10 * 60_000);
    const woke = await net.respond({ id: 'state', typeId: 'ENDPOINT_STATE', woken: true });
    expect(woke.status).toBe(201);
    expectMatchesSpec('client', 'POST', '/posture-response', 201, woke.body);
    expect(woke.body.data.services).toEqual([
      { id: net.serviceId, name: expect.any(String), postureQueryType: 'MFA', timeout: 3600, timeoutRemaining: 300 },
    ]);
    expect(await net.dial()).toBe(201);
    controller().advanceClock(6 * 60_000);
    expect(await net.dial()).toBe(409);
    await recordMfaPassed(controller().deps, { identityId: net.identityId, apiSessionId: sessionId });
    expect(await net.dial()).toBe(201);
  });
});

describe('createSession cost', () => {
  it('takes a bounded number of sequential DynamoDB round trips, however many policies there are', async () => {
    const net = await gated({ typeId: 'DOMAIN', domains: ['corp.example'] });
    await net.respond({ id: net.checkId, typeId: 'DOMAIN', domain: 'corp.example' });
    // Many more policies about the same identity and service.
    const tag = (await call('GET', `/identities/${net.identityId}`)).body.data.roleAttributes[0] as string;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        createdId('/service-policies', {
          name: unique(`pt-extra-${i}`),
          semantic: 'AnyOf',
          type: i % 2 === 0 ? 'Dial' : 'Bind',
          identityRoles: [`#${tag}`, '#other'],
          serviceRoles: ['#all'],
        }),
      ),
    );

    let inFlight = 0;
    let waves = 0;
    let counting = false;
    controller().deps.store.db.middlewareStack.add(
      (next) => async (args) => {
        if (!counting) return next(args);
        if (inFlight === 0) waves++;
        inFlight++;
        try {
          return await next(args);
        } finally {
          inFlight--;
        }
      },
      { step: 'initialize', name: 'waveCounter' },
    );
    counting = true;
    const created = await client('POST', '/sessions', net.token, { serviceId: net.serviceId, type: 'Dial' });
    counting = false;
    expect(created.status).toBe(201);
    // Two for the caller (its API session, its identity), four for the session.
    expect(waves).toBeLessThanOrEqual(6);
  });
});

describe('deleting an identity', () => {
  it('ends its sessions', async () => {
    const net = await gated({ typeId: 'DOMAIN', domains: ['corp.example'] });
    await net.respond({ id: net.checkId, typeId: 'DOMAIN', domain: 'corp.example' });
    const created = await client('POST', '/sessions', net.token, { serviceId: net.serviceId });
    expect(created.status).toBe(201);
    expect((await call('DELETE', `/identities/${net.identityId}`)).status).toBe(200);
    expect((await call('GET', `/sessions/${created.body.data.id}`)).status).toBe(404);
  });
});

describe('failed service requests', () => {
  it('keeps the last hundred per identity, oldest first', async () => {
    const deps = controller().deps;
    const identityId = unique('failing');
    for (let i = 0; i < MAX_FAILED_REQUESTS + 5; i++) {
      await recordFailedServiceRequest(deps, identityId, {
        apiSessionId: 'a',
        serviceId: `s${i}`,
        serviceName: `service ${i}`,
        sessionType: 'Dial',
        when: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        policyFailures: [],
      });
    }
    const kept = await failedServiceRequests(deps, identityId);
    expect(kept).toHaveLength(MAX_FAILED_REQUESTS);
    expect(kept[0]?.serviceId).toBe('s5');
    expect(kept.at(-1)?.serviceId).toBe(`s${MAX_FAILED_REQUESTS + 4}`);
  });
});
