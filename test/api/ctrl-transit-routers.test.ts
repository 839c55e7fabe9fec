import { describe, expect, it } from 'vitest';
import { type ChannelMessage, ContentType, Header } from '#ctrl-channel/message.ts';
import { useAdminController } from '../support/admin-controller.ts';
import {
  type Credentials,
  dialCtrl,
  enrolledRouter,
  everyIdentityUsesEveryRouter,
  type RouterEnd,
} from '../support/ctrl-router.ts';

/**
 * Transit routers (issue 37): a router with no edge, enrolled with `trott`, carries links and circuits between other
 * routers. It shows online while its control channel is connected, as the reference shows `isOnline` from its live
 * connection; it has no edge, so it is sent no edge hello and no API session.
 */
const { controller, call } = useAdminController();
const C = '/edge/client/v1';

let names = 0;
const unique = (name: string) => `${name}-${++names}-${Date.now().toString(36)}`;

/** The router, connected and past its hello. */
async function connected(credentials: Credentials, routerId: string): Promise<RouterEnd> {
  const end = await dialCtrl(controller(), credentials, { answerHeartbeats: true });
  const answer = await end.hello(routerId);
  expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
  return end;
}

/** Polls until `check` holds, for at most 10 s; its last answer. */
async function until<T>(read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `isOnline` of a transit router under both its paths and in the list. */
async function shownOnline(routerId: string): Promise<boolean[]> {
  const one = await call('GET', `/transit-routers/${routerId}`);
  const other = await call('GET', `/routers/${routerId}`);
  const list = await call('GET', `/transit-routers?filter=${encodeURIComponent(`id = "${routerId}"`)}`);
  expect(list.body.data).toHaveLength(1);
  return [one.body.data.isOnline, other.body.data.isOnline, list.body.data[0].isOnline];
}

/** Every message the controller sends within `ms`. */
async function messagesWithin(end: RouterEnd, ms: number): Promise<ChannelMessage[]> {
  const received: ChannelMessage[] = [];
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      received.push(await end.next(Math.max(1, deadline - Date.now())));
    } catch {
      return received;
    }
  }
}

describe('a transit router', () => {
  it('shows online while its control channel is connected, offline once it closes', async () => {
    const router = await enrolledRouter(controller, call, unique('transit'), 'transit-routers');
    expect(await shownOnline(router.id)).toEqual([false, false, false]);

    const end = await connected(router.credentials, router.id);
    expect(
      await until(
        () => shownOnline(router.id),
        (shown) => shown.every(Boolean),
      ),
    ).toEqual([true, true, true]);

    end.socket.destroy();
    expect(
      await until(
        () => shownOnline(router.id),
        (shown) => !shown.some(Boolean),
      ),
    ).toEqual([false, false, false]);
  });

  it('shows offline once its lease runs out (its endpoint died), the channel still open', async () => {
    const router = await enrolledRouter(controller, call, unique('transit-lapsed'), 'transit-routers');
    const end = await connected(router.credentials, router.id);
    expect(
      await until(
        () => shownOnline(router.id),
        (shown) => shown.every(Boolean),
      ),
    ).toEqual([true, true, true]);

    // Past the lease the endpoint wrote (the unresponsive timeout and two heartbeat intervals), none renewed since.
    controller().advanceClock(60_000);
    try {
      expect(await shownOnline(router.id)).toEqual([false, false, false]);
    } finally {
      controller().advanceClock(-60_000);
      end.socket.destroy();
    }
  });

  it('is sent no API session, while an edge router connected beside it is sent the login', async () => {
    await everyIdentityUsesEveryRouter(call);
    const transit = await enrolledRouter(controller, call, unique('transit-no-edge'), 'transit-routers');
    const edge = await enrolledRouter(controller, call, unique('edge-beside'), 'edge-routers');
    const transitEnd = await connected(transit.credentials, transit.id);
    const edgeEnd = await connected(edge.credentials, edge.id);

    const password = 'Transit-Passw0rd!';
    const username = unique('transit-user');
    const identity = await call('POST', '/identities', { name: username, type: 'User', isAdmin: false });
    await call('POST', '/authenticators', { identityId: identity.body.data.id, method: 'updb', username, password });
    const login = await controller().call('POST', `${C}/authenticate?method=password`, {
      body: { username, password },
    });
    expect(login.status, login.text).toBe(200);

    const [toTransit, toEdge] = await Promise.all([messagesWithin(transitEnd, 4_000), messagesWithin(edgeEnd, 4_000)]);
    const apiSessionTypes = new Set<number>([
      ContentType.apiSessionAdded,
      ContentType.apiSessionUpdated,
      ContentType.apiSessionRemoved,
    ]);
    expect(toEdge.some((message) => message.contentType === ContentType.apiSessionAdded)).toBe(true);
    expect(toTransit.filter((message) => apiSessionTypes.has(message.contentType))).toEqual([]);
    expect(toTransit.filter((message) => message.contentType === ContentType.serverHello)).toEqual([]);
    transitEnd.socket.destroy();
    edgeEnd.socket.destroy();
  });
});
