import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { keys } from '#shared/store/keys.ts';
import { capacityBetween, totalUnits } from '../../bench/capacity-tally.ts';
import { countDynamoDbRequests } from '../../bench/count-dynamodb-requests.ts';
import { useAdminController } from '../support/admin-controller.ts';

/**
 * A session keeps only its token's signature; every read rebuilds the token, and must show the very text the create
 * answered. A fresh Dial granted by many policies then writes what it wrote before tokens were JWTs.
 */
const C = '/edge/client/v1';
const { controller, call, createdId, userUnder } = useAdminController();

/**
 * Dial policies granting the session in the write-unit test (each adds its id to the document): with the whole JWT
 * the document passes a KB from about 14, with its signature from about 38.
 */
const GRANTING_POLICIES = 30;

let counter = 0;

/**
 * A user and a service it may dial through `policies` Dial policies and one router; a second service, granted alike,
 * for a second fresh session. Logged in: its API session token.
 */
async function dialer(policies: number) {
  const tag = `st-${++counter}-${Date.now().toString(36)}`;
  const user = await userUnder('default', tag);
  await call('PATCH', `/identities/${user.identityId}`, { roleAttributes: [tag] });
  const serviceId = await createdId('/services', { name: tag, roleAttributes: [`${tag}-svc`] });
  const other = await createdId('/services', { name: `${tag}-other`, roleAttributes: [`${tag}-svc`] });
  await createdId('/edge-routers', { name: `${tag}-er`, roleAttributes: [`${tag}-er`] });
  for (let i = 0; i < policies; i++) {
    await createdId('/service-policies', {
      name: `${tag}-dial-${i}`,
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`#${tag}`],
      serviceRoles: [`#${tag}-svc`],
      postureCheckRoles: [],
    });
  }
  await createdId('/edge-router-policies', {
    name: `${tag}-erp`,
    semantic: 'AnyOf',
    identityRoles: [`#${tag}`],
    edgeRouterRoles: [`#${tag}-er`],
  });
  await createdId('/service-edge-router-policies', {
    name: `${tag}-serp`,
    semantic: 'AnyOf',
    serviceRoles: [`#${tag}-svc`],
    edgeRouterRoles: [`#${tag}-er`],
  });
  const login = await controller().call('POST', `${C}/authenticate?method=password`, {
    body: { username: user.username, password: user.password },
  });
  expect(login.status, login.text).toBe(200);
  return { token: login.body.data.token as string, identityId: user.identityId, serviceId, other };
}

const dial = (token: string, serviceId: string) =>
  controller().call('POST', `${C}/sessions`, { token, body: { serviceId, type: 'Dial' } });

/** The session's stored item, as DynamoDB holds it. */
async function storedSession(id: string) {
  const { db, tableName } = controller().deps.store;
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: keys.entity('sessions', id), ConsistentRead: true }),
  );
  return Item ?? {};
}

const byFilter = async (filter: string) =>
  (await call('GET', `/sessions?filter=${encodeURIComponent(filter)}`)).body.data.map((s: { id: string }) => s.id);

describe('a session stores its token’s signature, not the token', () => {
  it('shows the token its create answered, byte for byte, on every read of either API', {
    timeout: 60_000,
  }, async () => {
    const caller = await dialer(1);
    const created = await dial(caller.token, caller.serviceId);
    expect(created.status, created.text).toBe(201);
    const { id, token } = created.body.data as { id: string; token: string };
    const signature = token.split('.')[2] ?? '';
    expect(signature).toHaveLength(86);

    // Stored: the signature, neither the token nor its header and claims, in the document or its filter record.
    const { db, tableName } = controller().deps.store;
    const item = await storedSession(id);
    const record = (await db.send(new GetCommand({ TableName: tableName, Key: keys.idOrder('sessions', id) }))).Item;
    for (const stored of [item, record ?? {}]) {
      expect(JSON.stringify(stored)).toContain(signature);
      expect(JSON.stringify(stored)).not.toContain(token.slice(0, token.lastIndexOf('.')));
    }

    const shown = [
      (await dial(caller.token, caller.serviceId)).body.data.token,
      (await controller().call('GET', `${C}/sessions/${id}`, { token: caller.token })).body.data.token,
      ...(await controller().call('GET', `${C}/sessions`, { token: caller.token })).body.data.map(
        (s: { token: string }) => s.token,
      ),
      (await call('GET', `/sessions/${id}`)).body.data.token,
      ...(await call('GET', `/sessions?filter=${encodeURIComponent(`id = "${id}"`)}`)).body.data.map(
        (s: { token: string }) => s.token,
      ),
    ];
    expect(shown).toEqual(Array(5).fill(token));

    // Found by the whole token (as the reference, which stores it) and by its signature; the list names `token` as
    // filterable, not where it is kept.
    expect(await byFilter(`token = "${token}"`)).toEqual([id]);
    expect(await byFilter(`token in ["${token}", "nothing"]`)).toEqual([id]);
    expect(await byFilter(`token = "${signature}"`)).toEqual([id]);
    expect(await byFilter(`token = "${token}x"`)).toEqual([]);
    const listed = await call('GET', `/sessions?filter=${encodeURIComponent(`id = "${id}"`)}`);
    expect(listed.body.meta.filterableFields).toContain('token');
    expect(listed.body.meta.filterableFields).not.toContain('tokenSignature');

    // The session-token header of the client's service edge routers takes the token, and nothing else.
    const routers = (sessionToken: string) =>
      controller().call('GET', `${C}/services/${caller.serviceId}/edge-routers`, {
        token: caller.token,
        headers: { 'session-token': sessionToken },
      });
    expect((await routers(token)).status).toBe(200);
    expect((await routers(signature)).status).toBe(401);
    expect((await routers(`${token.slice(0, -2)}AA`)).status).toBe(401);
  });

  it('shows a token stored whole (a session made before) as stored', async () => {
    const caller = await dialer(1);
    const created = await dial(caller.token, caller.serviceId);
    const { id } = created.body.data as { id: string };
    // The document as sessions were stored before: the whole token, no signature.
    const legacyToken = `eyJsZWdhY3kiOnRydWV9.eyJqdGkiOiIke2lkfSJ9.${'s'.repeat(86)}`;
    const { db, tableName } = controller().deps.store;
    const { tokenSignature, tokenIssuer: _issuer, ...older } = await storedSession(id);
    expect(tokenSignature).toEqual(expect.any(String));
    await db.send(new PutCommand({ TableName: tableName, Item: { ...older, token: legacyToken } }));

    expect((await controller().call('GET', `${C}/sessions/${id}`, { token: caller.token })).body.data.token).toBe(
      legacyToken,
    );
    expect((await call('GET', `/sessions/${id}`)).body.data.token).toBe(legacyToken);
    expect((await dial(caller.token, caller.serviceId)).body.data.token).toBe(legacyToken);
    const header = await controller().call('GET', `${C}/services/${caller.serviceId}/edge-routers`, {
      token: caller.token,
      headers: { 'session-token': legacyToken },
    });
    expect(header.status).toBe(200);
  });

  it(`writes 7 units for a fresh Dial that ${GRANTING_POLICIES} policies grant, as before tokens were JWTs`, {
    timeout: 120_000,
  }, async () => {
    const caller = await dialer(GRANTING_POLICIES);
    // The API session's first session also flags it: the one measured is its second, as most of the bench's are.
    expect((await dial(caller.token, caller.other)).status).toBe(201);
    const counter = countDynamoDbRequests(controller().deps.store.db);
    const before = counter.capacity();
    const created = await dial(caller.token, caller.serviceId);
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.token).toMatch(/^ey[\w-]+\.[\w-]+\.[\w-]{86}$/);
    await counter.settle();
    // The document, under a KB (twice in the transaction, once in GSI2), its id-order record and the type's counter
    // (each twice): 7, as before tokens were JWTs. The whole JWT, kept in both, took the document past a KB: 10.
    expect(totalUnits(capacityBetween(before, counter.capacity()).write)).toBe(7);
    expect(await storedSession(created.body.data.id)).not.toHaveProperty('token');
  });
});
