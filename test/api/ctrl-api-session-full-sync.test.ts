import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { apiSessionSyncFeature } from '#ctrl-channel/api-session-sync.ts';
import { type ChannelMessage, ContentType, Header } from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { hashToken } from '#shared/auth/session-token.ts';
import { API_SESSIONS_COLLECTION } from '#shared/store/api-session-items.ts';
import { keys } from '#shared/store/keys.ts';
import { useAdminController } from '../support/admin-controller.ts';
import {
  type Credentials,
  dialCtrl,
  enrolledEdgeRouter,
  everyIdentityUsesEveryRouter,
  type RouterEnd,
} from '../support/ctrl-router.ts';
import { hideItems, type RequestMatcher, refuseRequests } from '../support/dynamodb-faults.ts';
import { recordSent, type SentCommand } from '../support/dynamodb-recorder.ts';
import { enrolledDevice } from '../support/enrolled-device.ts';

/** The waits before a failed full sync's further attempts: three attempts. */
const RETRY_DELAYS_MS = [1_000, 1_000];
/** Long enough for routers dialed together to start their syncs within it, however loaded the machine. */
const GATHER_MS = 1_000;
/** What a poll passed on is kept for the syncs starting after it: long enough for a router to connect meanwhile. */
const RECENT_CHANGES_MS = 20_000;

const { controller, call } = useAdminController(
  {},
  {
    ctrlFeatures: [
      routerInterfaces,
      apiSessionSyncFeature({
        fullSyncRetryDelaysMs: RETRY_DELAYS_MS,
        fullSyncGatherMs: GATHER_MS,
        recentChangesMs: RECENT_CHANGES_MS,
      }),
    ],
  },
);

interface ApiSessionAdded {
  isFullState: boolean;
  apiSessions: { token: string; id: string }[];
}

let router: { id: string; credentials: Credentials };
let device: { id: string; credentials: Credentials };

beforeAll(async () => {
  router = await enrolledEdgeRouter(controller, call, 'sync-recovery-router');
  await everyIdentityUsesEveryRouter(call);
  device = await enrolledDevice(controller, call, 'sync-recovery-device');
});

/** A full sync's read of the sessions: the pages of the API sessions' type index. */
const fullSyncRead: RequestMatcher = (command, input) =>
  command === 'QueryCommand' &&
  input.IndexName === 'GSI1' &&
  (input.ExpressionAttributeValues as Record<string, unknown>)[':partition'] ===
    keys.typeIndex(API_SESSIONS_COLLECTION);

async function connected(as = router): Promise<RouterEnd> {
  const end = await dialCtrl(controller(), as.credentials, { answerHeartbeats: true });
  const answer = await end.hello(as.id);
  expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
  return end;
}

const certLogin = async () => {
  const response = await controller().call('POST', '/edge/client/v1/authenticate?method=cert', {
    body: {},
    cert: device.credentials,
  });
  expect(response.status, response.text).toBe(200);
  return { token: response.body.data.token as string, id: response.body.data.id as string };
};

/** The sessions of a full sync, its chunks read up to the one marked last, and its id. */
async function fullState(end: RouterEnd): Promise<ApiSessionAdded['apiSessions'] & { syncId?: string }> {
  const sessions: ApiSessionAdded['apiSessions'] & { syncId?: string } = [];
  for (;;) {
    const message = await end.next(10_000);
    if (message.contentType !== ContentType.apiSessionAdded) continue;
    const body = decodeBody<ApiSessionAdded>('edge.ApiSessionAdded', message.body);
    if (!body.isFullState) continue;
    sessions.push(...body.apiSessions);
    const state = JSON.parse(message.headers.get(Header.syncStrategyState)!.toString('utf8'));
    sessions.syncId = state.id;
    if (state.isLast === true) return sessions;
  }
}

/** Every message the controller sent until it closed the connection (failing if it stays open `timeoutMs`). */
async function untilClosed(end: RouterEnd, timeoutMs: number): Promise<ChannelMessage[]> {
  const closedInTime = await Promise.race([
    end.closed.then(() => true),
    new Promise<false>((resolve) => setTimeout(() => resolve(false), timeoutMs)),
  ]);
  expect(closedInTime, 'the controller closed the channel').toBe(true);
  const messages: ChannelMessage[] = [];
  for (;;) {
    try {
      messages.push(await end.next(1));
    } catch {
      return messages;
    }
  }
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let tries = 0; tries < 50; tries++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return read();
}

const syncStatus = async () => (await call('GET', `/edge-routers/${router.id}`)).body.data.syncStatus as string;

/** The sync statuses written to connection items. */
const statusesWritten = (sent: readonly SentCommand[]) =>
  sent.flatMap(({ input }) => {
    const status = (input.ExpressionAttributeValues as Record<string, unknown> | undefined)?.[':status'];
    return status === undefined ? [] : [status];
  });

const API_SESSION_MESSAGES: readonly number[] = [
  ContentType.apiSessionAdded,
  ContentType.apiSessionUpdated,
  ContentType.apiSessionRemoved,
];

describe('a full API session sync whose reads fail', () => {
  it('is tried again after a wait, and the router gets the full state and SYNC_DONE once the reads pass', async () => {
    const session = await certLogin();
    const fault = refuseRequests(controller().deps.store.db, fullSyncRead, 2);
    // Lifted however the test ends: a fault left on would fail the later tests' syncs.
    onTestFinished(fault.stop);
    const end = await connected();

    const sessions = await fullState(end);

    expect(fault.refused).toBe(2);
    expect(sessions.find((apiSession) => apiSession.id === session.id)?.token).toBe(session.token);
    expect(await eventually(syncStatus, (status) => status === 'SYNC_DONE')).toBe('SYNC_DONE');
    end.socket.destroy();
  });

  it('closes the channel after its last attempt, sending none of the changes held meanwhile, and the reconnected router is synced', async () => {
    const fault = refuseRequests(controller().deps.store.db, fullSyncRead);
    onTestFinished(fault.stop);
    const end = await connected();
    await eventually(
      async () => fault.refused,
      (refused) => refused > 0,
    );
    // Written while the sync fails: the poll (each second) holds it for the router, whose full state never goes.
    const session = await certLogin();

    const sent = await untilClosed(end, 15_000);

    expect(fault.refused).toBe(1 + RETRY_DELAYS_MS.length);
    expect(sent.filter((message) => API_SESSION_MESSAGES.includes(message.contentType))).toEqual([]);
    fault.stop();
    const again = await connected();
    const sessions = await fullState(again);
    expect(sessions.find((apiSession) => apiSession.id === session.id)?.token).toBe(session.token);
    expect(await eventually(syncStatus, (status) => status === 'SYNC_DONE')).toBe('SYNC_DONE');
    again.socket.destroy();
  });

  it('has the start wait for a resync the router asked for before it came online, recording no SYNC_DONE when it fails', async () => {
    const db = controller().deps.store.db;
    const fault = refuseRequests(db, fullSyncRead);
    onTestFinished(fault.stop);
    const sent = await recordSent(db, async () => {
      const end = await dialCtrl(controller(), router.credentials, { answerHeartbeats: true });
      const answer = end.hello(router.id);
      // Behind the hello, handled while the router is written online: its sync runs when the start's begins.
      end.send({
        contentType: ContentType.requestClientReSync,
        sequence: 1,
        body: encodeBody('edge.RequestClientReSync', { reason: 'a test asks at once' }),
      });
      expect((await answer).headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
      await untilClosed(end, 15_000);
    });

    expect(fault.refused).toBe(1 + RETRY_DELAYS_MS.length);
    expect(statusesWritten(sent)).not.toContain('SYNC_DONE');
  });
});

describe('full API session syncs that start together on an endpoint', () => {
  it('are sent from one read of the sessions, each router getting all of them', async () => {
    const session = await certLogin();
    const others = [
      await enrolledEdgeRouter(controller, call, 'sync-together-a'),
      await enrolledEdgeRouter(controller, call, 'sync-together-b'),
    ];
    const db = controller().deps.store.db;
    const fullSyncReads = (sent: readonly SentCommand[]) =>
      sent.filter(({ command, input }) => fullSyncRead(command, input)).length;
    const alone = await recordSent(db, async () => {
      const end = await connected();
      await fullState(end);
      end.socket.destroy();
    });

    let states: Awaited<ReturnType<typeof fullState>>[] = [];
    const together = await recordSent(db, async () => {
      const ends = await Promise.all([router, ...others].map((each) => connected(each)));
      states = await Promise.all(ends.map(fullState));
      for (const end of ends) end.socket.destroy();
    });

    expect(fullSyncReads(alone)).toBeGreaterThan(0);
    expect(fullSyncReads(together)).toBe(fullSyncReads(alone));
    for (const state of states) {
      expect(state.find((apiSession) => apiSession.id === session.id)?.token).toBe(session.token);
    }
    expect(new Set(states.map((state) => state.syncId)).size).toBe(1);
  });

  it('reads nothing for a router that went away while its sync waited for others, nor records its sync done', async () => {
    const db = controller().deps.store.db;
    const sent = await recordSent(db, async () => {
      const end = await connected();
      // Online: its sync has started, and waits the gathering's time for others.
      await eventually(
        async () => (await call('GET', `/edge-routers/${router.id}`)).body.data.isOnline as boolean,
        (online) => online,
      );
      end.socket.destroy();
      await end.closed;
      await sleep(GATHER_MS + 500);
    });

    expect(sent.filter(({ command, input }) => fullSyncRead(command, input))).toEqual([]);
    expect(statusesWritten(sent)).toEqual([]);
  });
});

describe('a session written just before a router starts its full sync', () => {
  /** The next incremental `ApiSessionAdded` naming the session, the full state's chunks and other messages passed over. */
  async function addedLater(end: RouterEnd, sessionId: string): Promise<ApiSessionAdded['apiSessions'][number]> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const message = await end.next(Math.max(1, deadline - Date.now()));
      if (message.contentType !== ContentType.apiSessionAdded) continue;
      const body = decodeBody<ApiSessionAdded>('edge.ApiSessionAdded', message.body);
      const found = body.isFullState ? undefined : body.apiSessions.find((apiSession) => apiSession.id === sessionId);
      if (found) return found;
    }
  }

  it('reaches the router after its full state when the full read does not show it yet', async () => {
    const synced = await connected();
    await fullState(synced);
    const session = await certLogin();
    // The poll passed it on to the router already synced: it is not read as a change again.
    await addedLater(synced, session.id);
    // The index has not caught up with the session's write: the full sync's read leaves it out.
    const tokenHash = hashToken(session.token);
    const lag = hideItems(
      controller().deps.store.db,
      fullSyncRead,
      (item) => item.tokenHash === tokenHash || item.PK === `APISESSION#${tokenHash}`,
    );
    onTestFinished(lag.stop);
    const other = await enrolledEdgeRouter(controller, call, 'sync-after-change');
    const starting = await connected(other);

    const sessions = await fullState(starting);
    const added = await addedLater(starting, session.id);

    expect(lag.hidden).toBeGreaterThan(0);
    expect(sessions.map((apiSession) => apiSession.id)).not.toContain(session.id);
    expect(added.token).toBe(session.token);
    synced.socket.destroy();
    starting.socket.destroy();
  });
});
