import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
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
import { dynamoDbTracker } from '../support/dynamodb-tracker.ts';

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

    let created: Awaited<ReturnType<typeof client>> | undefined;
    const { waves } = await dynamoDbTracker(controller().deps.store.db).measure(async () => {
      created = await client('POST', '/sessions', net.token, { serviceId: net.serviceId, type: 'Dial' });
    });
    expect(created?.status).toBe(201);
    // Two for the caller (its API session, its identity), three for the session: what the caller and the service id
    // key, what the service's roles key (with every posture check, as a granting policy names one), the write.
    expect(waves).toBe(5);
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

/**
 * createSession's decision against a brute-force evaluation of its definition (guide §e's match rule, the policies'
 * posture checks, the shared edge routers): random small networks, each run with its own attributes, its policies
 * deleted at the end. Edge router and posture check roles never use `#all` here, so other tests' routers and checks
 * in this table cannot change an answer.
 */
describe('damaged stored items', () => {
  it('read as empty or are skipped, so the requests that meet them still answer', async () => {
    const net = await gated({ typeId: 'MAC', macAddresses: ['AA:BB:CC:00:11:22'] });
    await net.respond({ id: net.checkId, typeId: 'MAC', macAddresses: ['00:00:00:00:00:01'] });
    expect(await net.dial()).toBe(409);
    const typeId = await createdId('/config-types', { name: unique('dmg-type') });
    const configId = await createdId('/configs', { name: unique('dmg-config'), configTypeId: typeId, data: {} });
    const associated = await call('POST', `/identities/${net.identityId}/service-configs`, [
      { serviceId: net.serviceId, configId },
    ]);
    expect(associated.status, associated.text).toBe(200);
    const sessionId = (await client('GET', '/current-api-session', net.token)).body.data.id as string;

    const { db, tableName } = controller().deps.store;
    const damage = (Key: Record<string, string>, attribute: string, value: string) =>
      db.send(
        new UpdateCommand({
          TableName: tableName,
          Key,
          UpdateExpression: 'SET #a = :v',
          ExpressionAttributeNames: { '#a': attribute },
          ExpressionAttributeValues: { ':v': value },
        }),
      );
    await damage({ PK: `POSTURE#${sessionId}`, SK: 'DATA' }, 'data', '{not json');
    await damage({ PK: `FAILED-SESSIONS#${net.identityId}`, SK: 'DATA' }, 'failures', '[{"sessionType": 7}]');
    const override = `${net.identityId}.${net.serviceId}.${typeId}`;
    await damage({ PK: `identity-service-configs#${override}`, SK: 'META' }, 'serviceId', '');
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { PK: `identity-service-configs#${override}`, SK: 'META' },
        UpdateExpression: 'REMOVE configId',
      }),
    );

    const data = await call('GET', `/identities/${net.identityId}/posture-data`);
    expect(data.status, data.text).toBe(200);
    expect(data.body.data.mac.addresses ?? []).toEqual([]);
    const failures = await call('GET', `/identities/${net.identityId}/failed-service-requests`);
    expect(failures.status, failures.text).toBe(200);
    expect(failures.body.data).toEqual([]);
    const services = await client('GET', '/services?configTypes=all', net.token);
    expect(services.status, services.text).toBe(200);
    expect(services.body.data.map((service: { id: string }) => service.id)).toContain(net.serviceId);

    // The next writes replace the damaged items whole.
    await net.respond({ id: net.checkId, typeId: 'MAC', macAddresses: ['aa:bb:cc:00:11:22'] });
    expect(await net.dial()).toBe(201);
    const after = await call('GET', `/identities/${net.identityId}/posture-data`);
    expect(after.body.data.mac.addresses).toEqual(['aabbcc001122']);
  });
});

describe('createSession decisions', () => {
  type Semantic = 'AllOf' | 'AnyOf';
  type RoleSpec = { attribute: number } | { all: true } | { named: number };
  interface Entity {
    id: string;
    attributes: string[];
  }

  const selects = (roles: readonly string[], semantic: Semantic, entity: Entity): boolean => {
    if (roles.includes('#all') || roles.includes(`@${entity.id}`)) return true;
    const wanted = roles.filter((role) => role.startsWith('#')).map((role) => role.slice(1));
    if (wanted.length === 0) return false;
    const held = wanted.filter((attribute) => entity.attributes.includes(attribute)).length;
    return semantic === 'AllOf' ? held === wanted.length : held > 0;
  };

  const attributeSet = fc.subarray([0, 1], { minLength: 1 });
  // Mostly non-empty roles and attributes, so that every outcome, success included, comes up in a few runs.
  const roleSpecs = (allowAll: boolean, minLength = 1) =>
    fc.array(
      fc.oneof(
        fc.record({ attribute: fc.constantFrom(0, 1) }),
        fc.record({ named: fc.constantFrom(0, 1) }),
        ...(allowAll ? [fc.constant({ all: true } as const)] : []),
      ),
      { minLength, maxLength: 2 },
    );
  const semantic = fc.constantFrom<Semantic>('AllOf', 'AnyOf');
  const scenario = fc.record({
    identity: attributeSet,
    services: fc.tuple(attributeSet, attributeSet),
    routers: fc.tuple(attributeSet, attributeSet),
    checks: fc.tuple(attributeSet, attributeSet),
    servicePolicies: fc.array(
      fc.record({
        semantic,
        type: fc.constantFrom('Dial', 'Bind'),
        identityRoles: roleSpecs(true),
        serviceRoles: roleSpecs(true),
        postureCheckRoles: roleSpecs(false, 0),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    routerPolicies: fc.array(
      fc.record({ semantic, identityRoles: roleSpecs(true), edgeRouterRoles: roleSpecs(false) }),
      { minLength: 1, maxLength: 2 },
    ),
    serviceRouterPolicies: fc.array(
      fc.record({ semantic, serviceRoles: roleSpecs(true), edgeRouterRoles: roleSpecs(false) }),
      { minLength: 1, maxLength: 2 },
    ),
    reported: fc.constantFrom('one.example', 'two.example', undefined),
  });

  it('equals the brute-force decision for every service and type', { timeout: 300_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const prefix = unique('pd');
        const attrs = (indexes: readonly number[]) => indexes.map((i) => `${prefix}-${i}`);
        const roles = (specs: readonly RoleSpec[], named: readonly Entity[]) =>
          specs.some((spec) => 'all' in spec)
            ? ['#all']
            : [
                ...new Set(
                  specs.map((spec) =>
                    'attribute' in spec
                      ? `#${prefix}-${spec.attribute}`
                      : `@${named[(spec as { named: number }).named]?.id}`,
                  ),
                ),
              ];

        const name = unique('pd-user');
        const identity: Entity = {
          id: await createdId('/identities', { name, type: 'User', isAdmin: false, roleAttributes: attrs(s.identity) }),
          attributes: attrs(s.identity),
        };
        await createdId('/authenticators', {
          identityId: identity.id,
          method: 'updb',
          username: name,
          password: `${name}-Pw1!`,
        });
        const make = async (path: string, body: Record<string, unknown>, attributes: string[]) => ({
          id: await createdId(path, { name: unique('pd'), roleAttributes: attributes, ...body }),
          attributes,
        });
        const services = await Promise.all(s.services.map((a) => make('/services', {}, attrs(a))));
        const routers = await Promise.all(s.routers.map((a) => make('/edge-routers', { cost: 0 }, attrs(a))));
        const domains = ['one.example', 'two.example'];
        const checks = await Promise.all(
          s.checks.map((a, i) => make('/posture-checks', { typeId: 'DOMAIN', domains: [domains[i]] }, attrs(a))),
        );
        const checkDomain = new Map(checks.map((check, i) => [check.id, domains[i]]));

        const servicePolicies = s.servicePolicies.map((p) => ({
          semantic: p.semantic,
          type: p.type,
          identityRoles: roles(p.identityRoles, [identity, identity]),
          serviceRoles: roles(p.serviceRoles, services),
          postureCheckRoles: roles(p.postureCheckRoles, checks),
        }));
        const routerPolicies = s.routerPolicies.map((p) => ({
          semantic: p.semantic,
          identityRoles: roles(p.identityRoles, [identity, identity]),
          edgeRouterRoles: roles(p.edgeRouterRoles, routers),
        }));
        const serviceRouterPolicies = s.serviceRouterPolicies.map((p) => ({
          semantic: p.semantic,
          serviceRoles: roles(p.serviceRoles, services),
          edgeRouterRoles: roles(p.edgeRouterRoles, routers),
        }));
        const created: string[] = [];
        for (const [path, bodies] of [
          ['/service-policies', servicePolicies],
          ['/edge-router-policies', routerPolicies],
          ['/service-edge-router-policies', serviceRouterPolicies],
        ] as const) {
          for (const body of bodies)
            created.push(`${path}/${await createdId(path, { name: unique('pd-p'), ...body })}`);
        }

        const token = await controller().login(name, `${name}-Pw1!`);
        if (s.reported) {
          const checkId = checks[domains.indexOf(s.reported)]?.id;
          await client('POST', '/posture-response', token, { id: checkId, typeId: 'DOMAIN', domain: s.reported });
        }

        try {
          for (const service of services) {
            for (const type of ['Dial', 'Bind'] as const) {
              const granting = servicePolicies.filter(
                (p) => selects(p.identityRoles, p.semantic, identity) && selects(p.serviceRoles, p.semantic, service),
              );
              const ofType = granting.filter((p) => p.type === type);
              const passing = ofType.filter((p) =>
                checks
                  .filter((check) => selects(p.postureCheckRoles, p.semantic, check))
                  .every((check) => checkDomain.get(check.id) === s.reported),
              );
              const shared = routers.some(
                (router) =>
                  routerPolicies.some(
                    (p) =>
                      selects(p.identityRoles, p.semantic, identity) && selects(p.edgeRouterRoles, p.semantic, router),
                  ) &&
                  serviceRouterPolicies.some(
                    (p) =>
                      selects(p.serviceRoles, p.semantic, service) && selects(p.edgeRouterRoles, p.semantic, router),
                  ),
              );
              const expected =
                granting.length === 0
                  ? 404
                  : ofType.length === 0
                    ? 'COULD_NOT_VALIDATE'
                    : passing.length === 0
                      ? 409
                      : shared
                        ? 201
                        : 'NO_EDGE_ROUTERS_AVAILABLE';
              const response = await client('POST', '/sessions', token, { serviceId: service.id, type });
              const actual = response.status === 400 ? response.body.error.code : response.status;
              expect({ service: service.id, type, actual }).toEqual({ service: service.id, type, actual: expected });
            }
          }
        } finally {
          for (const path of created) await call('DELETE', path);
        }
      }),
      { numRuns: 20 },
    );
  });
});
