import { beforeAll, describe, expect, it } from 'vitest';
import { apiSessionSync } from '#ctrl-channel/api-session-sync.ts';
import { PLACEHOLDER_REMOVAL_DELAY_MS } from '#ctrl-channel/full-state-sends.ts';
import { type ChannelMessage, ContentType, Header, int32Header } from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { routerRevocation } from '#ctrl-channel/router-revocation.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { type Credentials, dialCtrl, enrolledEdgeRouter, type RouterEnd } from '../support/ctrl-router.ts';
import { storeApiSessions } from '../support/stored-api-sessions.ts';
import { ADMIN_PASSWORD, ADMIN_USERNAME } from '../support/test-controller.ts';

/**
 * What a router holds, and what losing one costs (security round 5): a router is sent only the API sessions it can be
 * asked to check — those opened on the client API by identities its edge router policies let use it — and none of
 * them acts as an admin; it follows the identities' policies as they change; and a disabled, re-enrolled or deleted
 * router loses its control channel within seconds.
 */
const { controller, call, createdId } = useAdminController(
  {},
  // The sync and the revocations alone: no edge hello or data model messages between the ones these tests read.
  { ctrlFeatures: [routerRevocation, routerInterfaces, apiSessionSync] },
);
const C = '/edge/client/v1';
const M = '/edge/management/v1';

/** How long a v2 router waits for an SDK's API session to reach it: what a change of reach should take at most. */
const ROUTER_LOOKUP_TIMEOUT_MS = 5_000;
/** How long a router is watched for what it must not be sent (a few polls of the change log). */
const QUIET_MS = 3_000;

let names = 0;
const unique = (name: string) => `${name}-${++names}-${Date.now().toString(36)}`;

interface ApiSession {
  token: string;
  id: string;
  identityId: string;
}
interface User {
  readonly identityId: string;
  readonly username: string;
  readonly password: string;
}

/** An identity with a password, its role attributes and admin flag as given. */
async function user(roleAttributes: readonly string[], isAdmin = false): Promise<User> {
  const username = unique('holds-user');
  const password = `${username}-Passw0rd!`;
  const identityId = await createdId('/identities', { name: username, type: 'User', isAdmin, roleAttributes });
  await createdId('/authenticators', { identityId, method: 'updb', username, password });
  return { identityId, username, password };
}

/** A password login on one API: its session's id and token. */
async function loginOn(api: 'client' | 'management', who: User): Promise<{ id: string; token: string }> {
  const base = api === 'client' ? C : M;
  const response = await controller().call('POST', `${base}/authenticate?method=password`, {
    body: { username: who.username, password: who.password },
  });
  expect(response.status, response.text).toBe(200);
  return { id: response.body.data.id as string, token: response.body.data.token as string };
}

/** The router, connected and past its hello. */
async function connected(credentials: Credentials, routerId: string): Promise<RouterEnd> {
  const end = await dialCtrl(controller(), credentials, { answerHeartbeats: true });
  const answer = await end.hello(routerId);
  expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
  return end;
}

/**
 * What a router is told of API sessions, as a router would keep it: the tokens of the sessions it holds (a full
 * state replaces them; added and updated ones set; removed ones dropped), and every token it was ever sent.
 */
class RouterView {
  readonly held = new Map<string, ApiSession>();
  /** Tokens removed, in order. */
  readonly removed: string[] = [];
  readonly everSent = new Set<string>();
  fullStates = 0;
  private fullStateParts: ApiSession[] = [];

  private readonly end: RouterEnd;

  constructor(end: RouterEnd) {
    this.end = end;
  }

  /** Reads until the first full state is applied. */
  async synced(): Promise<void> {
    await this.readFor(8_000, () => this.fullStates > 0);
    expect(this.fullStates).toBe(1);
  }

  /** The tokens of the sessions it holds, the full state's placeholder (`~`, removed a few seconds later) aside. */
  tokens(): Set<string> {
    return new Set([...this.held.values()].filter((session) => session.id !== '~').map((session) => session.token));
  }

  /** Reads what comes within `ms`, or until `done` holds. */
  async readFor(ms: number, done: () => boolean = () => false): Promise<void> {
    const until = Date.now() + ms;
    while (!done()) {
      let message: ChannelMessage;
      try {
        message = await this.end.next(Math.max(1, until - Date.now()));
      } catch {
        return;
      }
      this.take(message);
    }
  }

  /**
   * A full state as the reference router applies it (`RemoveMissingApiSessions`): its sessions set, and those it
   * holds that the state leaves out dropped when their id compares at or below the highest id of the state (all of
   * them when the state is empty).
   */
  private applyFullState(): void {
    const known = new Set(this.fullStateParts.map((session) => session.token));
    const highest =
      this.fullStateParts
        .map((session) => session.id)
        .sort()
        .at(-1) ?? '';
    for (const [token, session] of this.held) {
      if (!known.has(token) && (highest === '' || session.id <= highest)) this.held.delete(token);
    }
    for (const session of this.fullStateParts) this.held.set(session.token, session);
    this.fullStateParts = [];
    this.fullStates += 1;
  }

  private take(message: ChannelMessage): void {
    if (message.contentType === ContentType.serverHello) {
      this.end.send({
        contentType: ContentType.clientHello,
        sequence: 1_000 + message.sequence,
        headers: new Map([[Header.replyFor, int32Header(message.sequence)]]),
        body: encodeBody('edge.ClientHello', { version: 'v2.0.0', hostname: 'router.example.com' }),
      });
      return;
    }
    if (message.contentType === ContentType.apiSessionAdded || message.contentType === ContentType.apiSessionUpdated) {
      const typeName =
        message.contentType === ContentType.apiSessionAdded ? 'edge.ApiSessionAdded' : 'edge.ApiSessionUpdated';
      const body = decodeBody<{ isFullState?: boolean; apiSessions: ApiSession[] }>(typeName, message.body);
      // The full state's placeholder (`~`) is no session: it is removed right after the state.
      for (const session of body.apiSessions) if (session.id !== '~') this.everSent.add(session.token);
      if (body.isFullState !== true) {
        for (const session of body.apiSessions) this.held.set(session.token, session);
        return;
      }
      this.fullStateParts.push(...body.apiSessions);
      const state = JSON.parse(message.headers.get(Header.syncStrategyState)!.toString('utf8'));
      if (state.isLast === true) this.applyFullState();
      return;
    }
    if (message.contentType === ContentType.apiSessionRemoved) {
      const body = decodeBody<{ tokens: string[] }>('edge.ApiSessionRemoved', message.body);
      for (const token of body.tokens) this.held.delete(token);
      this.removed.push(...body.tokens);
    }
  }
}

/** Whether a token can do what only an admin may: list identities and create an admin. */
async function adminOperationsOf(token: string): Promise<number[]> {
  const listed = await controller().call('GET', `${M}/identities`, { token });
  const createdAdmin = await controller().call('POST', `${M}/identities`, {
    token,
    body: { name: unique('holds-stolen-admin'), type: 'User', isAdmin: true },
  });
  return [listed.status, createdAdmin.status];
}

describe('what a router is sent of API sessions', () => {
  let router: { id: string; credentials: Credentials };
  let tag: string;
  let policyId: string;

  beforeAll(async () => {
    router = await enrolledEdgeRouter(controller, call, 'holds-router');
    tag = unique('holds-ab');
    policyId = await createdId('/edge-router-policies', {
      name: unique('holds-erp'),
      semantic: 'AnyOf',
      identityRoles: [`#${tag}`],
      edgeRouterRoles: [`@${router.id}`],
    });
  });

  it('sends a router under policies reaching identities A and B their client sessions and nothing else; none of them acts as an admin', async () => {
    const a = await user([tag]);
    const b = await user([tag]);
    const elsewhere = await user([unique('holds-elsewhere')]);
    // An admin identity the policy reaches, which logs in on both APIs (as a tunneler and as the CLI would).
    const adminUser = await user([tag], true);
    const aClient = await loginOn('client', a);
    const bClient = await loginOn('client', b);
    const aManagement = await loginOn('management', a);
    const elsewhereClient = await loginOn('client', elsewhere);
    const adminClient = await loginOn('client', adminUser);
    const adminManagement = await loginOn('management', adminUser);
    const defaultAdmin = await controller().login();

    const end = await connected(router.credentials, router.id);
    const view = new RouterView(end);
    await view.synced();
    expect(view.tokens()).toEqual(new Set([aClient.token, bClient.token, adminClient.token]));

    // Logins made while it is connected: only the reached identities' client logins reach it.
    const aLater = await loginOn('client', a);
    await loginOn('client', elsewhere);
    await loginOn('management', adminUser);
    const bLater = await loginOn('client', b);
    await view.readFor(ROUTER_LOOKUP_TIMEOUT_MS, () => view.held.has(aLater.token) && view.held.has(bLater.token));
    await view.readFor(QUIET_MS);

    const expected = [aClient, bClient, adminClient, aLater, bLater].map((session) => session.token);
    expect(new Set(view.everSent)).toEqual(new Set(expected));
    for (const token of [aManagement.token, elsewhereClient.token, adminManagement.token, defaultAdmin]) {
      expect(view.everSent.has(token)).toBe(false);
    }
    // Not one token a router holds acts as an admin on the management API, the admin identity's own included.
    for (const token of view.everSent) expect(await adminOperationsOf(token)).toEqual([401, 401]);
    // The same admin's management session does.
    expect((await controller().call('GET', `${M}/identities`, { token: adminManagement.token })).status).toBe(200);
    end.socket.destroy();
  });

  it('moves sessions onto and off a router as its identities come to be and stop being reached by its policies', async () => {
    const a = await user([tag]);
    const c = await user([unique('holds-c')]);
    const aClient = await loginOn('client', a);
    const cClient = await loginOn('client', c);
    const end = await connected(router.credentials, router.id);
    const view = new RouterView(end);
    await view.synced();
    expect(view.held.has(aClient.token)).toBe(true);
    expect(view.held.has(cClient.token)).toBe(false);

    // C gains the policy's attribute: its session reaches the router.
    expect((await call('PATCH', `/identities/${c.identityId}`, { roleAttributes: [tag] })).status).toBe(200);
    await view.readFor(ROUTER_LOOKUP_TIMEOUT_MS, () => view.held.has(cClient.token));
    expect(view.held.has(cClient.token)).toBe(true);

    // A loses it: the router is told to drop A's session.
    expect((await call('PATCH', `/identities/${a.identityId}`, { roleAttributes: [] })).status).toBe(200);
    await view.readFor(ROUTER_LOOKUP_TIMEOUT_MS, () => !view.held.has(aClient.token));
    expect(view.held.has(aClient.token)).toBe(false);

    // The policy itself: without the router, every session it sent leaves; back, they come back.
    expect((await call('PATCH', `/edge-router-policies/${policyId}`, { edgeRouterRoles: [] })).status).toBe(200);
    await view.readFor(ROUTER_LOOKUP_TIMEOUT_MS, () => !view.held.has(cClient.token));
    expect(view.held.has(cClient.token)).toBe(false);
    expect(
      (await call('PATCH', `/edge-router-policies/${policyId}`, { edgeRouterRoles: [`@${router.id}`] })).status,
    ).toBe(200);
    await view.readFor(ROUTER_LOOKUP_TIMEOUT_MS, () => view.held.has(cClient.token));
    expect(view.held.has(cClient.token)).toBe(true);
    expect(view.held.has(aClient.token)).toBe(false);
    end.socket.destroy();
  });

  it('has a router drop, with its full state, the sessions it was sent before that are not its to hold, whatever their ids', async () => {
    const reached = await user([tag]);
    const notReached = await user([unique('holds-legacy')]);
    // Sessions as they were stored before the API was recorded, when every router was sent every session.
    const [reachedLegacy] = await storeApiSessions(controller().deps, reached.identityId, 1, 0, undefined, {
      legacy: true,
    });
    const [notReachedLegacy] = await storeApiSessions(controller().deps, notReached.identityId, 1, 0, undefined, {
      legacy: true,
    });
    const end = await connected(router.credentials, router.id);
    const view = new RouterView(end);
    // What the router kept from before, the not reached session under an id above any of the state's.
    view.held.set(notReachedLegacy!.token, {
      token: notReachedLegacy!.token,
      id: 'zzzzzzzzzz',
      identityId: notReached.identityId,
    });
    await view.synced();

    expect(view.held.has(reachedLegacy!.token)).toBe(true);
    expect(view.held.has(notReachedLegacy!.token)).toBe(false);
    expect(view.everSent.has(notReachedLegacy!.token)).toBe(false);
    // The placeholder that made it drop them is removed once the router has applied the state.
    const placeholder = () => [...view.held.values()].some((session) => session.id === '~');
    expect(placeholder()).toBe(true);
    await view.readFor(PLACEHOLDER_REMOVAL_DELAY_MS + 3_000, () => !placeholder());
    expect(placeholder()).toBe(false);
    end.socket.destroy();
  });
});

describe('an admin session opened on the client API', () => {
  it('does no admin operation on the management API, and says where to log in', async () => {
    const token = (
      await controller().call('POST', `${C}/authenticate?method=password`, {
        body: { username: ADMIN_USERNAME, password: ADMIN_PASSWORD },
      })
    ).body.data.token as string;

    const refused = await controller().call('GET', `${M}/identities`, { token });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('UNAUTHORIZED');
    expect(refused.body.error.cause.message).toContain('/edge/management/v1/authenticate');
    // What the identity may do as itself still works with it.
    expect((await controller().call('GET', `${M}/current-identity`, { token })).status).toBe(200);
    expect((await controller().call('GET', `${C}/current-identity`, { token })).status).toBe(200);
  });
});

describe('a router that is disabled, re-enrolled or deleted', () => {
  /** A router enrolled, connected and past its full state, and a way to know when its channel is closed. */
  async function connectedRouter(name: string) {
    const router = await enrolledEdgeRouter(controller, call, name);
    const end = await connected(router.credentials, router.id);
    const view = new RouterView(end);
    await view.synced();
    const closedAt = end.closed.then(() => Date.now());
    return { router, end, closedAt };
  }

  /** How long the router's channel took to close after `changedAt`, and whether it then shows offline. */
  async function disconnection(closedAt: Promise<number>, changedAt: number, routerId: string) {
    const closed = await Promise.race([
      closedAt,
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 10_000)),
    ]);
    expect(closed, 'the channel was not closed within 10 s').toBeDefined();
    for (let tries = 0; tries < 20; tries++) {
      const shown = await call('GET', `/edge-routers/${routerId}`);
      if (shown.status === 404 || shown.body.data.isOnline === false) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const shown = await call('GET', `/edge-routers/${routerId}`);
    if (shown.status !== 404) expect(shown.body.data.isOnline).toBe(false);
    return closed! - changedAt;
  }

  it('is disconnected within 5 s of its disable, shown offline, and refused when it connects again', async () => {
    const { router, closedAt } = await connectedRouter(unique('holds-disabled'));
    const changedAt = Date.now();
    expect((await call('PATCH', `/edge-routers/${router.id}`, { disabled: true })).status).toBe(200);
    expect(await disconnection(closedAt, changedAt, router.id)).toBeLessThan(5_000);

    const again = await dialCtrl(controller(), router.credentials);
    const answer = await again.hello(router.id);
    expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([0]));
    again.socket.destroy();
  });

  it('is disconnected within 5 s of its re-enroll, shown offline', async () => {
    const { router, closedAt } = await connectedRouter(unique('holds-reenrolled'));
    const changedAt = Date.now();
    expect((await call('POST', `/edge-routers/${router.id}/re-enroll`)).status).toBe(200);
    expect(await disconnection(closedAt, changedAt, router.id)).toBeLessThan(5_000);
  });

  it('is disconnected within 5 s of its delete', async () => {
    const { router, closedAt } = await connectedRouter(unique('holds-deleted'));
    const changedAt = Date.now();
    expect((await call('DELETE', `/edge-routers/${router.id}`)).status).toBe(200);
    expect(await disconnection(closedAt, changedAt, router.id)).toBeLessThan(5_000);
  });
});
