import { randomUUID } from 'node:crypto';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { TOUCH_INTERVAL_MS } from '#shared/auth/api-session-store.ts';
import { hashToken } from '#shared/auth/session-token.ts';
import { identities } from '#shared/entities/identity.ts';
import { counterOp } from '#shared/store/entity-store.ts';
import { keys } from '#shared/store/keys.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { dynamoDbTracker } from '../support/dynamodb-tracker.ts';
import { integrityRun } from '../support/integrity.ts';
import { csrFor, leafOf } from '../support/pki-fixtures.ts';
import { ADMIN_PASSWORD, ADMIN_USERNAME } from '../support/test-controller.ts';

/**
 * The round trips of the paths every client takes: a login and any authenticated request. Counted on the
 * controller's DynamoDB client, so a change that adds a sequential read fails here. Login throttling is on, as
 * deployed.
 */

const TIMEOUT_MINUTES = 10;
// Throttling stays on, as deployed (every attempt counts its windows), with limits above the logins this file makes.
const LIMIT = 1_000_000;
const { controller, call, createdId } = useAdminController({
  apiSessionTimeoutMinutes: TIMEOUT_MINUTES,
  loginRateLimit: { perIp: LIMIT, perUsername: LIMIT, perSourceAndUsername: LIMIT, windowSeconds: 60 },
});
const M = '/edge/management/v1';
const C = '/edge/client/v1';
const SDK_BODY = {
  envInfo: { os: 'linux', arch: 'amd64', hostname: 'device-1', osRelease: '6.1', osVersion: '#1 SMP' },
  sdkInfo: { type: 'ziti-sdk-golang', version: 'v1.1.0', revision: 'abc', branch: 'main', appId: 'app' },
};

const measure = (run: () => Promise<unknown>) => dynamoDbTracker(controller().deps.store.db).measure(run);

function passwordLogin(body: Record<string, unknown> = {}, api = M) {
  return controller().call('POST', `${api}/authenticate?method=password`, {
    body: { username: ADMIN_USERNAME, password: ADMIN_PASSWORD, ...body },
  });
}

/** The stored session item of a token, as DynamoDB holds it. */
async function storedSession(token: string) {
  return (await controller().deps.store.batchGet([keys.apiSession(hashToken(token))]))[0];
}

async function enrolledDevice(name: string) {
  const id = await createdId('/identities', { name, type: 'Device', isAdmin: false, enrollment: { ott: true } });
  const token = (await call('GET', `/identities/${id}`)).body.data.enrollment.ott.token;
  const { csr, key } = await csrFor(name);
  const enrolled = await controller().call('POST', `${C}/enroll/ott`, { body: { token, clientCsr: csr } });
  expect(enrolled.status, enrolled.text).toBe(200);
  return { id, credentials: { key, cert: leafOf(enrolled.body.data.cert) } };
}

describe('password login', () => {
  it('takes 3 waves: throttle counters with the username marker, one batch read, one transaction', async () => {
    await passwordLogin();
    let status = 0;
    const trips = await measure(async () => {
      status = (await passwordLogin()).status;
    });
    expect(status).toBe(200);
    // Wave 1: three throttle counters, whether the address is remembered for the username (the read that lets the
    // owner's own machine past a username-wide flood; it has no other wave to go in) and the marker; wave 2:
    // authenticator, identity, MFA, auth policy; wave 3: the session's transaction.
    expect(trips).toEqual({ waves: 3, requests: 7 });
  });

  it("writes the SDK's envInfo/sdkInfo once, and nothing of the identity when it logs in again with the same", async () => {
    const first = await passwordLogin(SDK_BODY, C);
    expect(first.status, first.text).toBe(200);
    const identityId = first.body.data.identity.id as string;
    const versionAfterFirst = (await controller().deps.store.get(identities, identityId))!.version;

    const again = await passwordLogin(SDK_BODY, C);
    expect(again.status).toBe(200);
    expect((await controller().deps.store.get(identities, identityId))!.version).toBe(versionAfterFirst);

    const moved = await passwordLogin({ ...SDK_BODY, sdkInfo: { ...SDK_BODY.sdkInfo, version: 'v1.2.0' } }, C);
    expect(moved.status).toBe(200);
    const stored = (await controller().deps.store.get(identities, identityId))!;
    expect(stored.version).toBe(versionAfterFirst + 1);
    expect(stored.doc.sdkInfo?.version).toBe('v1.2.0');
  });
});

describe('a username marker written before markers carried the identity id', () => {
  it('still logs in, reading the authenticator first, and the integrity fix brings the marker up to date', async () => {
    const { deps } = controller();
    const marker = keys.unique('authenticators', 'username', ADMIN_USERNAME);
    const identityId = (await passwordLogin()).body.data.identity.id as string;
    expect((await deps.store.batchGet([marker]))[0]?.identityId).toBe(identityId);
    await deps.store.db.send(
      new UpdateCommand({ TableName: deps.store.tableName, Key: marker, UpdateExpression: 'REMOVE identityId' }),
    );

    let status = 0;
    const trips = await measure(async () => {
      status = (await passwordLogin()).status;
    });
    expect(status).toBe(200);
    // The 3 waves above and the authenticator's read first; the remembered-address read rides in the first wave.
    expect(trips).toEqual({ waves: 4, requests: 8 });

    const checked = await integrityRun(deps, 'check');
    expect(checked.map((finding) => finding.description).join('\n')).toContain(`${marker.PK} / ${ADMIN_USERNAME}`);
    const fixed = await integrityRun(deps, 'fix');
    expect(fixed.some((finding) => finding.fixed && finding.description.includes(marker.PK))).toBe(true);
    expect((await deps.store.batchGet([marker]))[0]?.identityId).toBe(identityId);
    expect(await measure(() => passwordLogin())).toEqual({ waves: 3, requests: 7 });
  });
});

describe('certificate login', () => {
  it('takes 2 waves: throttle counter with one batch read and the identity authenticators, then one transaction', async () => {
    const device = await enrolledDevice('round-trip-device');
    const login = () =>
      controller().call('POST', `${C}/authenticate?method=cert`, { body: {}, cert: device.credentials });
    expect((await login()).status).toBe(200);
    let status = 0;
    let identityId = '';
    const trips = await measure(async () => {
      const response = await login();
      status = response.status;
      identityId = response.body.data?.identity?.id;
    });
    expect(status).toBe(200);
    expect(identityId).toBe(device.id);
    expect(trips).toEqual({ waves: 2, requests: 4 });
  });
});

describe('an authenticated request', () => {
  it('reads session, identity and authenticator in one batch, and writes nothing within a minute of the last touch', async () => {
    const token = (await passwordLogin()).body.data.token as string;
    let status = 0;
    const trips = await measure(async () => {
      status = (await controller().call('GET', `${M}/current-api-session`, { token })).status;
    });
    expect(status).toBe(200);
    expect(trips).toEqual({ waves: 1, requests: 1 });
  });

  it('touches the session at most once per interval, in one more small write', async () => {
    const token = (await passwordLogin()).body.data.token as string;
    const loggedInAt = String((await storedSession(token))!.lastActivityAt);

    controller().advanceClock(TOUCH_INTERVAL_MS / 2);
    const early = await controller().call('GET', `${M}/current-api-session`, { token });
    expect(early.status).toBe(200);
    expect((await storedSession(token))!.lastActivityAt).toBe(loggedInAt);
    expect(early.body.data.lastActivityAt).toBe(loggedInAt);

    controller().advanceClock(TOUCH_INTERVAL_MS / 2);
    let touchedAt = '';
    const trips = await measure(async () => {
      touchedAt = (await controller().call('GET', `${M}/current-api-session`, { token })).body.data.lastActivityAt;
    });
    expect(trips).toEqual({ waves: 2, requests: 2 });
    expect(Date.parse(touchedAt)).toBeGreaterThanOrEqual(Date.parse(loggedInAt) + TOUCH_INTERVAL_MS);
    expect(Date.parse(touchedAt)).toBeLessThanOrEqual(controller().deps.now().getTime());
    expect((await storedSession(token))!.lastActivityAt).toBe(touchedAt);

    const right = await measure(() => controller().call('GET', `${M}/current-api-session`, { token }));
    expect(right).toEqual({ waves: 1, requests: 1 });
  });

  it('ends an idle session at the expiry it reports: its last touch plus the timeout, untouched requests aside', async () => {
    const current = (token: string) => controller().call('GET', `${M}/current-api-session`, { token });
    const first = (await passwordLogin()).body.data.token as string;
    const second = (await passwordLogin()).body.data.token as string;
    controller().advanceClock(TOUCH_INTERVAL_MS - 5_000);
    // Requests within the interval write nothing, so the expiry they report stays the login's plus the timeout.
    const reported = async (token: string) => {
      const response = await current(token);
      expect(response.status).toBe(200);
      const stored = Date.parse(String((await storedSession(token))!.lastActivityAt));
      expect(Date.parse(response.body.data.expiresAt)).toBe(stored + TIMEOUT_MINUTES * 60_000);
      return Date.parse(response.body.data.expiresAt);
    };
    const firstExpiry = await reported(first);
    const secondExpiry = await reported(second);

    // Just before its reported expiry the session is live (and this request touches it)...
    controller().advanceClock(firstExpiry - 5_000 - controller().deps.now().getTime());
    expect((await current(first)).status).toBe(200);
    // ...and just after it, it has ended: removed on use.
    controller().advanceClock(secondExpiry + 1 - controller().deps.now().getTime());
    expect((await current(second)).status).toBe(401);
    expect(await storedSession(second)).toBeUndefined();
  });
});

describe('tokens issued before they carried the identity id', () => {
  /** A session stored as the previous build stored it: a bare UUID token, its index keys on the session item. */
  async function legacySession(): Promise<{ token: string; id: string }> {
    const { deps } = controller();
    const adminId = (await passwordLogin()).body.data.identity.id as string;
    const token = randomUUID();
    const tokenHash = hashToken(token);
    const id = `legacy${Math.random().toString(36).slice(2, 8)}`;
    const now = deps.now().toISOString();
    const session = {
      id,
      createdAt: now,
      updatedAt: now,
      tags: {},
      identityId: adminId,
      authenticatorId: 'legacy',
      ipAddress: '127.0.0.1',
      configTypes: [],
      isMfaRequired: false,
      isMfaComplete: false,
      totpPending: false,
      extJwtPending: false,
      isCertExtendable: false,
      isCertExtendRequested: false,
      isCertKeyRollRequested: false,
      improperClientCertChain: false,
      lastActivityAt: now,
      tokenHash,
    };
    const put = (Item: Record<string, unknown>) =>
      deps.store.db.send(new PutCommand({ TableName: deps.store.tableName, Item }));
    await put({
      ...keys.apiSession(tokenHash),
      GSI1PK: keys.typeIndex('api-sessions'),
      GSI1SK: id,
      GSI2PK: keys.sessionsIndex(adminId),
      GSI2SK: `api-sessions#${id}`,
      GSI3PK: 'ACTIVITY#api-sessions',
      GSI3SK: now,
      expiresAtEpoch: Math.ceil(Date.now() / 1000) + 86_400,
      ...session,
    });
    await put({ ...keys.apiSessionPointer(id), tokenHash });
    await deps.store.transact([counterOp(deps.store.tableName, 'api-sessions', 1)]);
    return { token, id };
  }

  it('still authenticate (their identity read after their session) and are listed', async () => {
    const legacy = await legacySession();
    let status = 0;
    const trips = await measure(async () => {
      status = (await controller().call('GET', `${M}/current-api-session`, { token: legacy.token })).status;
    });
    expect(status).toBe(200);
    expect(trips).toEqual({ waves: 2, requests: 2 });

    const admin = await controller().login();
    const listed = await controller().call('GET', `${M}/api-sessions?limit=500`, { token: admin });
    expect(listed.body.data.map((session: { id: string }) => session.id)).toContain(legacy.id);
    const filter = encodeURIComponent('lastActivityAt != null');
    const filtered = await controller().call('GET', `${M}/api-sessions?filter=${filter}`, { token: admin });
    expect(filtered.body.data.map((session: { id: string }) => session.id)).toContain(legacy.id);
  });

  it('are touched into their activity shard, and end once idle past the timeout', async () => {
    const legacy = await legacySession();
    controller().advanceClock(TOUCH_INTERVAL_MS);
    expect((await controller().call('GET', `${M}/current-api-session`, { token: legacy.token })).status).toBe(200);
    expect(String((await storedSession(legacy.token))!.GSI3PK)).toMatch(/^ACTIVITY#api-sessions#\d+$/);

    controller().advanceClock(TIMEOUT_MINUTES * 60_000 + 1);
    expect((await controller().call('GET', `${M}/current-api-session`, { token: legacy.token })).status).toBe(401);
    expect(await storedSession(legacy.token)).toBeUndefined();
  });

  it('are left out of the list, and counted out of its total, once expired', async () => {
    const legacy = await legacySession();
    controller().advanceClock(TIMEOUT_MINUTES * 60_000 + 1);
    const admin = await controller().login();
    const listed = await controller().call('GET', `${M}/api-sessions?limit=500`, { token: admin });
    const ids = listed.body.data.map((session: { id: string }) => session.id);
    expect(ids).not.toContain(legacy.id);
    expect(listed.body.meta.pagination.totalCount).toBe(ids.length);
  });
});
