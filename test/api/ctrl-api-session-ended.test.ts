import { beforeAll, describe, expect, it } from 'vitest';
import { apiSessionSync } from '#ctrl-channel/api-session-sync.ts';
import { circuits } from '#ctrl-channel/circuits.ts';
import { type ChannelMessage, ContentType, Header, replyForOf } from '#ctrl-channel/message.ts';
import { decodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { storedApiSessionIds } from '#shared/auth/api-session-store.ts';
import { sweepEndedSessions } from '#shared/auth/ended-sessions-sweep.ts';
import { hashToken } from '#shared/auth/session-token.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { releaseSystemLease, takeSystemLease } from '#shared/store/system-items.ts';
import { useAdminController } from '../support/admin-controller.ts';
import {
  type Credentials,
  dialCtrl,
  enrolledEdgeRouter,
  everyIdentityUsesEveryRouter,
  type RouterEnd,
} from '../support/ctrl-router.ts';
import { refuseRequests } from '../support/dynamodb-faults.ts';
import { recordSent } from '../support/dynamodb-recorder.ts';
import { edgeNetwork } from '../support/edge-network.ts';
import { authPolicyBody } from '../support/management-fixtures.ts';
import { issue, makeCa } from '../support/pki-fixtures.ts';
import { storeApiSessions, storeManyApiSessions } from '../support/stored-api-sessions.ts';

/**
 * API sessions that end without an end of their own (their identity disabled, locked out, revoked or deleted, the
 * authenticator that opened them deleted): a router that holds one hears of it as of a logout, within the time of a
 * poll of the changes, not only once the session would have gone idle.
 */
const { controller, admin, call, createdId, createPolicy, userUnder, clientLogin } = useAdminController(
  {},
  // The sync and circuits alone: no edge hello or data model messages between the ones these tests read.
  { ctrlFeatures: [routerInterfaces, apiSessionSync, circuits] },
);
const C = '/edge/client/v1';

/** How long a v2 router waits for an SDK's API session to reach it: its end should reach it as soon. */
const ROUTER_LOOKUP_TIMEOUT_MS = 5_000;
/** More sessions than one removal transaction holds (two items each): the removal after the commit takes several. */
const MORE_THAN_A_TRANSACTION = 60;
/** An identity with many sessions: its disable must answer as fast as any, whatever their number. */
const MANY_SESSIONS = 5_000;
/** How long after its instant the sweep first takes a notice (`ended-sessions-sweep.ts`'s settle), and a margin. */
const SWEEP_SETTLE_MS = 5_500;

let router: { id: string; credentials: Credentials };
let names = 0;
const unique = (name: string) => `${name}-${++names}-${Date.now().toString(36)}`;

beforeAll(async () => {
  router = await enrolledEdgeRouter(controller, call, 'ended-router');
  await everyIdentityUsesEveryRouter(call);
});

/** The router, connected, past its hello and its first full sync (so it holds every live session). */
async function syncedRouter(): Promise<RouterEnd> {
  const end = await dialCtrl(controller(), router.credentials, { answerHeartbeats: true });
  const answer = await end.hello(router.id);
  expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
  for (;;) {
    const message = await end.next(8_000);
    if (message.contentType !== ContentType.apiSessionAdded) continue;
    const state = message.headers.get(Header.syncStrategyState)?.toString('utf8');
    if (state && JSON.parse(state).isLast === true) return end;
  }
}

/**
 * Reads the router's messages until ApiSessionRemoved has named every one of `ids` with its token; answers how long
 * that took. Fails when they are not all named within `timeoutMs`.
 */
async function removalsOf(end: RouterEnd, sessions: readonly { id: string; token: string }[], timeoutMs = 8_000) {
  const started = Date.now();
  const waiting = new Map(sessions.map((session) => [session.id, session.token]));
  while (waiting.size > 0) {
    const message = await end.next(Math.max(1, timeoutMs - (Date.now() - started))).catch(() => {
      throw new Error(`not removed within ${timeoutMs} ms: ${waiting.size} of ${sessions.length} sessions`);
    });
    if (message.contentType !== ContentType.apiSessionRemoved) continue;
    const body = decodeBody<{ tokens: string[]; ids: string[] }>('edge.ApiSessionRemoved', message.body);
    for (const [index, id] of body.ids.entries()) {
      if (waiting.has(id)) {
        expect(body.tokens[index]).toBe(waiting.get(id));
        waiting.delete(id);
      }
    }
  }
  return Date.now() - started;
}

/** Whether the router is told nothing of these sessions' removal within `ms`. */
async function noRemovalOf(end: RouterEnd, ids: readonly string[], ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    let message: ChannelMessage;
    try {
      message = await end.next(Math.max(1, until - Date.now()));
    } catch {
      return true;
    }
    if (message.contentType !== ContentType.apiSessionRemoved) continue;
    const body = decodeBody<{ ids: string[] }>('edge.ApiSessionRemoved', message.body);
    if (body.ids.some((id) => ids.includes(id))) return false;
  }
}

/** A user under its own policy (`updb` its password settings), with a password session and `stored` more. */
async function userWithSessions(
  stored: number,
  updb: Record<string, unknown> = {},
  store: (
    deps: Deps,
    identityId: string,
    howMany: number,
  ) => Promise<{ id: string; token: string }[]> = storeApiSessions,
) {
  const policyId = await createPolicy(authPolicyBody(unique('ended-policy'), updb));
  const user = await userUnder(policyId, unique('ended-user'));
  const loggedIn = await clientLogin(user.username, user.password);
  expect(loggedIn.status, loggedIn.text).toBe(200);
  const session = { id: loggedIn.body.data.id as string, token: loggedIn.body.data.token as string };
  return { ...user, session, stored: await store(controller().deps, user.identityId, stored) };
}

describe('API sessions that end without being removed reach the routers when they end', () => {
  it('tells a router of every session of a disabled identity, more than one removal transaction holds', async () => {
    const user = await userWithSessions(MORE_THAN_A_TRANSACTION);
    const end = await syncedRouter();

    const disabled = await call('POST', `/identities/${user.identityId}/disable`, { durationMinutes: 0 });
    expect(disabled.status, disabled.text).toBe(200);

    expect(await removalsOf(end, [user.session, ...user.stored])).toBeLessThan(ROUTER_LOOKUP_TIMEOUT_MS);
    end.socket.destroy();
  });

  it('answers a disable of an identity with 5,000 sessions with two transactions; the routers hear of every session and the sweep removes each', async () => {
    const user = await userWithSessions(MANY_SESSIONS - 1, {}, storeManyApiSessions);
    const sessions = [user.session, ...user.stored];
    const end = await syncedRouter();

    const sent = await recordSent(controller().deps.store.db, async () => {
      const disabled = await call('POST', `/identities/${user.identityId}/disable`, { durationMinutes: 0 });
      expect(disabled.status, disabled.text).toBe(200);
    });
    // The request wrote the disable and removed one transaction's worth of sessions, however many there are: the rest
    // are not its work.
    const written = sent.filter((request) => request.user === 'identities' && request.command.startsWith('Transact'));
    expect(written).toHaveLength(2);
    for (const session of [sessions[0]!, sessions.at(-1)!]) {
      const current = await controller().call('GET', `${C}/current-api-session`, { token: session.token });
      expect(current.status, current.text).toBe(401);
    }

    expect(await removalsOf(end, sessions, 30_000)).toBeLessThan(30_000);
    end.socket.destroy();
    // Still stored until the sweep takes the notice, once settled: refused all the same.
    const ids = sessions.map((session) => session.id);
    expect((await storedApiSessionIds(controller().deps, ids)).size).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, SWEEP_SETTLE_MS));
    await sweepEndedSessions(controller().deps);
    expect((await storedApiSessionIds(controller().deps, ids)).size).toBe(0);
  }, 120_000);

  it('sweeps the notices after one that fails, and that one again at the next run', async () => {
    const failing = await userWithSessions(MORE_THAN_A_TRANSACTION);
    const passing = await userWithSessions(MORE_THAN_A_TRANSACTION);
    const idsOf = (user: typeof failing) => [user.session, ...user.stored].map((session) => session.id);
    for (const user of [failing, passing]) {
      expect((await call('POST', `/identities/${user.identityId}/disable`, { durationMinutes: 0 })).status).toBe(200);
    }
    await new Promise((resolve) => setTimeout(resolve, SWEEP_SETTLE_MS));

    // The sweep's removals of the failing identity's sessions (their items are keyed by their tokens' hashes).
    const hashes = [failing.session, ...failing.stored].map((session) => hashToken(session.token));
    const fault = refuseRequests(
      controller().deps.store.db,
      (command, input) =>
        command === 'TransactWriteItemsCommand' && hashes.some((hash) => JSON.stringify(input).includes(hash)),
    );
    let first: Awaited<ReturnType<typeof sweepEndedSessions>>;
    try {
      first = await sweepEndedSessions(controller().deps);
    } finally {
      fault.stop();
    }
    expect(first.failed).toBe(1);
    expect((await storedApiSessionIds(controller().deps, idsOf(failing))).size).toBeGreaterThan(0);
    expect((await storedApiSessionIds(controller().deps, idsOf(passing))).size).toBe(0);

    const second = await sweepEndedSessions(controller().deps);
    expect(second.failed).toBe(0);
    expect((await storedApiSessionIds(controller().deps, idsOf(failing))).size).toBe(0);
  });

  it('runs one sweep at a time: a run that finds the sweep held does nothing', async () => {
    const user = await userWithSessions(MORE_THAN_A_TRANSACTION);
    const ids = [user.session, ...user.stored].map((session) => session.id);
    expect((await call('POST', `/identities/${user.identityId}/disable`, { durationMinutes: 0 })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, SWEEP_SETTLE_MS));
    const { store } = controller().deps;
    const now = Date.now();
    expect(await takeSystemLease(store, 'ended-sessions-sweep', 'another-run', now + 60_000, now)).toBe(true);

    expect(await sweepEndedSessions(controller().deps)).toEqual({ notices: 0, failed: 0, busy: true });
    expect((await storedApiSessionIds(controller().deps, ids)).size).toBeGreaterThan(0);

    await releaseSystemLease(store, 'ended-sessions-sweep', 'another-run');
    expect((await sweepEndedSessions(controller().deps)).busy).toBeUndefined();
    expect((await storedApiSessionIds(controller().deps, ids)).size).toBe(0);
  });

  it('tells a router of every session of a deleted identity, more than one removal transaction holds', async () => {
    const user = await userWithSessions(MORE_THAN_A_TRANSACTION);
    const end = await syncedRouter();

    const deleted = await call('DELETE', `/identities/${user.identityId}`);
    expect(deleted.status, deleted.text).toBe(200);

    expect(await removalsOf(end, [user.session, ...user.stored])).toBeLessThan(ROUTER_LOOKUP_TIMEOUT_MS);
    end.socket.destroy();
  });

  it('tells a router of the sessions of an identity locked out by wrong passwords', async () => {
    const user = await userWithSessions(1, { maxAttempts: 2, lockoutDurationMinutes: 0 });
    const end = await syncedRouter();

    for (let attempt = 0; attempt < 2; attempt++) {
      expect((await clientLogin(user.username, 'not-the-password')).status).toBe(401);
    }

    expect(await removalsOf(end, [user.session, ...user.stored])).toBeLessThan(ROUTER_LOOKUP_TIMEOUT_MS);
    const identity = await call('GET', `/identities/${user.identityId}`);
    expect(identity.body.data.disabled).toBe(true);
    end.socket.destroy();
  });

  it('locks out an identity whose sessions end at the same time, and still tells a router of them', async () => {
    // More sessions than the lockout's retries: a lock that removed them in its own transaction lost to each end.
    const user = await userWithSessions(15, { maxAttempts: 2, lockoutDurationMinutes: 0 });
    const end = await syncedRouter();
    const { db } = controller().deps.store;
    // Just before a transaction that locks the identity and removes its sessions, one of them is logged out.
    db.middlewareStack.add(
      (next, context) => async (args) => {
        const input = JSON.stringify(args.input);
        const ending = /api-sessions#([^"#]+)/.exec(input)?.[1];
        if (String(context.commandName).startsWith('TransactWrite') && input.includes('sessionsValidFrom') && ending) {
          expect((await call('DELETE', `/api-sessions/${ending}`)).status).toBe(200);
        }
        return next(args);
      },
      { step: 'initialize', name: 'sessionEndsBeforeTheLock' },
    );
    try {
      expect((await clientLogin(user.username, 'not-the-password')).status).toBe(401);
      const locking = await clientLogin(user.username, 'not-the-password');
      expect(locking.status, locking.text).toBe(401);
    } finally {
      db.middlewareStack.remove('sessionEndsBeforeTheLock');
    }

    expect((await call('GET', `/identities/${user.identityId}`)).body.data.disabled).toBe(true);
    expect(await removalsOf(end, [user.session, ...user.stored])).toBeLessThan(ROUTER_LOOKUP_TIMEOUT_MS);
    end.socket.destroy();
  });

  it('tells a router of the sessions an IDENTITY revocation ends, and keeps a login made after it', async () => {
    const user = await userWithSessions(1);
    const end = await syncedRouter();

    const revoked = await call('POST', '/revocations', { id: user.identityId, type: 'IDENTITY' });
    expect(revoked.status, revoked.text).toBe(201);

    expect(await removalsOf(end, [user.session, ...user.stored])).toBeLessThan(ROUTER_LOOKUP_TIMEOUT_MS);
    const after = await clientLogin(user.username, user.password);
    expect(after.status, after.text).toBe(200);
    const current = await controller().call('GET', `${C}/current-api-session`, { token: after.body.data.token });
    expect(current.status, current.text).toBe(200);
    end.socket.destroy();
  });

  it('tells a router of the sessions a deleted authenticator opened, and of none its identity opened otherwise', async () => {
    // The stored sessions were opened by no authenticator of the identity: they do not end with the password's.
    const user = await userWithSessions(2);
    const end = await syncedRouter();

    const deleted = await call('DELETE', `/authenticators/${user.authenticatorId}`);
    expect(deleted.status, deleted.text).toBe(200);

    expect(await removalsOf(end, [user.session])).toBeLessThan(ROUTER_LOOKUP_TIMEOUT_MS);
    expect(
      await noRemovalOf(
        end,
        user.stored.map((session) => session.id),
        2_000,
      ),
    ).toBe(true);
    for (const session of user.stored) {
      const current = await controller().call('GET', `${C}/current-api-session`, { token: session.token });
      expect(current.status, current.text).toBe(200);
    }
    end.socket.destroy();
  });

  it('tells a router of every session a deleted authenticator opened, more than one removal transaction holds', async () => {
    const user = await userWithSessions(0);
    const opened = await storeApiSessions(
      controller().deps,
      user.identityId,
      MORE_THAN_A_TRANSACTION,
      0,
      user.authenticatorId,
    );
    const end = await syncedRouter();

    const deleted = await call('DELETE', `/authenticators/${user.authenticatorId}`);
    expect(deleted.status, deleted.text).toBe(200);

    expect(await removalsOf(end, [user.session, ...opened])).toBeLessThan(ROUTER_LOOKUP_TIMEOUT_MS);
    end.socket.destroy();
  });

  it('tells a router of the sessions of an authenticator reverted to an enrollment (re-enroll)', async () => {
    const user = await userWithSessions(0);
    const end = await syncedRouter();

    const expiresAt = new Date(controller().deps.now().getTime() + 3_600_000).toISOString();
    const reEnrolled = await call('POST', `/authenticators/${user.authenticatorId}/re-enroll`, { expiresAt });
    expect(reEnrolled.status, reEnrolled.text).toBe(201);

    expect(await removalsOf(end, [user.session])).toBeLessThan(ROUTER_LOOKUP_TIMEOUT_MS);
    end.socket.destroy();
  });

  it('tells a router of the sessions the authenticators a deleted CA issued opened', async () => {
    const ca = await makeCa(unique('ended-ca'));
    const caId = await createdId('/cas', {
      name: unique('ended-ca'),
      certPem: ca.pem,
      isAutoCaEnrollmentEnabled: true,
      isOttCaEnrollmentEnabled: false,
      isAuthEnabled: true,
      identityRoles: [],
    });
    const proof = await issue(ca, (await call('GET', `/cas/${caId}`)).body.data.verificationToken);
    const verified = await controller().call('POST', `/edge/management/v1/cas/${caId}/verify`, {
      token: admin(),
      rawBody: proof.cert,
      headers: { 'content-type': 'text/plain' },
    });
    expect(verified.status, verified.text).toBe(200);
    const sessions = [];
    for (const name of ['north', 'south']) {
      const device = await issue(ca, unique(name));
      const enrolled = await controller().call('POST', `${C}/enroll/ca`, { body: {}, cert: device });
      expect(enrolled.status, enrolled.text).toBe(200);
      const loggedIn = await controller().call('POST', `${C}/authenticate?method=cert`, { body: {}, cert: device });
      expect(loggedIn.status, loggedIn.text).toBe(200);
      sessions.push({ id: loggedIn.body.data.id as string, token: loggedIn.body.data.token as string });
    }
    const end = await syncedRouter();

    const deleted = await call('DELETE', `/cas/${caId}`);
    expect(deleted.status, deleted.text).toBe(200);

    expect(await removalsOf(end, sessions)).toBeLessThan(ROUTER_LOOKUP_TIMEOUT_MS);
    end.socket.destroy();
  });

  it("refuses a router's Dial on behalf of a disabled identity's session at once, whatever the router holds", async () => {
    const network = await edgeNetwork(controller, call, router.id);
    const end = await syncedRouter();
    const dial = await network.dialer.session('Dial');

    const disabled = await call('POST', `/identities/${network.dialer.identityId}/disable`, { durationMinutes: 0 });
    expect(disabled.status, disabled.text).toBe(200);
    end.send({
      contentType: ContentType.createCircuitV2Request,
      sequence: 900,
      headers: new Map([
        [11, Buffer.from(dial.token)],
        [14, Buffer.from(network.dialer.apiSessionToken)],
      ]),
    });

    let refusal = await end.next(5_000);
    while (refusal.contentType !== ContentType.error) refusal = await end.next(5_000);
    expect(replyForOf(refusal)).toBe(900);
    // 2: invalid API session (the SDK's edge error code), the check reading the session and its identity as they are.
    expect(refusal.headers.get(1014)?.readUInt32LE(0)).toBe(2);
    end.socket.destroy();
  });
});

/** More sessions than a change's optimistic retries: one is logged out before each attempt of the change. */
const MORE_THAN_THE_RETRIES = 15;

/**
 * Runs `change` while, just before each transaction it sends (one whose input names `marker`), its owner logs out
 * one more of `sessions`: a change that removed them in its own transaction, conditioned on each being there, was
 * cancelled by every such logout, and answered 429 once its retries were spent. Answers the change's response and how
 * many sessions were logged out meanwhile.
 */
async function whileLoggingOut<T>(
  marker: (input: string) => boolean,
  sessions: readonly { token: string }[],
  change: () => Promise<T>,
): Promise<{ response: T; loggedOut: number }> {
  const { db } = controller().deps.store;
  const left = [...sessions];
  let loggedOut = 0;
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const changing = String(context.commandName).startsWith('TransactWrite') && marker(JSON.stringify(args.input));
      const session = changing ? left.pop() : undefined;
      if (session) {
        const logout = await controller().call('DELETE', `${C}/current-api-session`, { token: session.token });
        expect(logout.status, logout.text).toBe(200);
        loggedOut += 1;
      }
      return next(args);
    },
    { step: 'initialize', name: 'ownerLogsOutDuringTheChange' },
  );
  try {
    return { response: await change(), loggedOut };
  } finally {
    db.middlewareStack.remove('ownerLogsOutDuringTheChange');
  }
}

/** Whether every one of the sessions is refused and none is stored any more. */
async function allEnded(sessions: readonly { id: string; token: string }[]): Promise<void> {
  for (const session of sessions) {
    const current = await controller().call('GET', `${C}/current-api-session`, { token: session.token });
    expect(current.status, current.text).toBe(401);
  }
  const stored = await storedApiSessionIds(
    controller().deps,
    sessions.map((session) => session.id),
  );
  expect([...stored]).toEqual([]);
}

describe("an identity's own logouts do not hold off the change that ends its sessions", () => {
  it('disables an identity whose sessions are logged out one by one while the disable runs', async () => {
    const user = await userWithSessions(MORE_THAN_THE_RETRIES);
    const sessions = [user.session, ...user.stored];

    const { response, loggedOut } = await whileLoggingOut(
      (input) => input.includes(user.identityId) && input.includes('sessionsValidFrom'),
      sessions,
      () => call('POST', `/identities/${user.identityId}/disable`, { durationMinutes: 0 }),
    );

    expect(response.status, response.text).toBe(200);
    expect(loggedOut).toBe(1);
    await allEnded(sessions);
  });

  it('revokes an identity whose sessions are logged out one by one while the revocation runs', async () => {
    const user = await userWithSessions(MORE_THAN_THE_RETRIES);
    const sessions = [user.session, ...user.stored];

    const { response, loggedOut } = await whileLoggingOut(
      (input) => input.includes(user.identityId) && input.includes('sessionsValidFrom'),
      sessions,
      () => call('POST', '/revocations', { id: user.identityId, type: 'IDENTITY' }),
    );

    expect(response.status, response.text).toBe(201);
    expect(loggedOut).toBe(1);
    await allEnded(sessions);
  });

  it('deletes an authenticator whose sessions are logged out one by one while the delete runs', async () => {
    const user = await userWithSessions(0);
    const opened = await storeApiSessions(
      controller().deps,
      user.identityId,
      MORE_THAN_THE_RETRIES,
      0,
      user.authenticatorId,
    );
    const sessions = [user.session, ...opened];

    const { response, loggedOut } = await whileLoggingOut(
      (input) => input.includes(user.authenticatorId) && input.includes('updbAuthenticatorId'),
      sessions,
      () => call('DELETE', `/authenticators/${user.authenticatorId}`),
    );

    expect(response.status, response.text).toBe(200);
    expect(loggedOut).toBe(1);
    await allEnded(sessions);
  });
});
