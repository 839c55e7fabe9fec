import { X509Certificate } from 'node:crypto';
import { generate } from 'otplib';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiSessionSync } from '#ctrl-channel/api-session-sync.ts';
import { CHANGE_PAGE_SIZE, POLL_GRACE_MS, POLL_INTERVAL_MS } from '#ctrl-channel/ctrl-change-poll.ts';
import { type ChannelMessage, ContentType, Header, int32Header } from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { useAdminController } from '../support/admin-controller.ts';
import {
  type Credentials,
  dialCtrl,
  enrolledEdgeRouter,
  everyIdentityUsesEveryRouter,
  type RouterEnd,
} from '../support/ctrl-router.ts';
import { recordSent } from '../support/dynamodb-recorder.ts';
import { enrolledDevice } from '../support/enrolled-device.ts';
import { authPolicyBody } from '../support/management-fixtures.ts';
import { csrFor, leafOf } from '../support/pki-fixtures.ts';
import { storeApiSessions } from '../support/stored-api-sessions.ts';

const { controller, call, createPolicy, userUnder, clientLogin } = useAdminController(
  {},
  // The sync alone: no edge hello or data model messages between the ones these tests read.
  { ctrlFeatures: [routerInterfaces, apiSessionSync] },
);
const C = '/edge/client/v1';

/** How long a v2 router waits for an SDK's API session to reach it (its `lookupApiSessionTimeout`). */
const ROUTER_LOOKUP_TIMEOUT_MS = 5_000;
/** Sessions stored at once, and how long their changes are watched after (about ten polls). */
const BURST_SIZE = 30;
const BURST_WATCH_MS = 12_000;

interface ApiSession {
  token: string;
  certFingerprints: string[];
  id: string;
  identityId: string;
}
interface ApiSessionAdded {
  isFullState: boolean;
  apiSessions: ApiSession[];
}

let router: { id: string; credentials: Credentials };
let device: { id: string; credentials: Credentials };
let names = 0;
const unique = (name: string) => `${name}-${++names}-${Date.now().toString(36)}`;

beforeAll(async () => {
  router = await enrolledEdgeRouter(controller, call, 'sync-router');
  await everyIdentityUsesEveryRouter(call);
  device = await enrolledDevice(controller, call, 'sync-device');
});

/** SHA-1 of the certificate's DER, lowercase hex without separators, as a router compares an SDK's certificate. */
const sha1Of = (pem: string) => new X509Certificate(pem).fingerprint.replaceAll(':', '').toLowerCase();

/** The router, connected and past its hello. */
async function connected(): Promise<RouterEnd> {
  const end = await dialCtrl(controller(), router.credentials, { answerHeartbeats: true });
  const answer = await end.hello(router.id);
  expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
  return end;
}

/**
 * The next message of `contentType` the controller sends, as a router would read on: a ServerHello is answered with a
 * ClientHello (as a router answers it, so the sync that follows it comes), anything else is passed over.
 */
async function nextOf(end: RouterEnd, contentType: number, timeoutMs = 8_000): Promise<ChannelMessage> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const message = await end.next(Math.max(1, deadline - Date.now()));
    if (message.contentType === contentType) return message;
    if (message.contentType === ContentType.serverHello) {
      end.send({
        contentType: ContentType.clientHello,
        sequence: 1_000 + message.sequence,
        headers: new Map([[Header.replyFor, int32Header(message.sequence)]]),
        body: encodeBody('edge.ClientHello', { version: 'v2.0.0', hostname: 'router.example.com' }),
      });
    }
  }
}

interface SyncChunk {
  body: ApiSessionAdded;
  strategy: string;
  state: string;
}

/** A full sync's chunks, up to the one marked last. */
async function fullSync(end: RouterEnd): Promise<SyncChunk[]> {
  const chunks: SyncChunk[] = [];
  for (;;) {
    const message = await nextOf(end, ContentType.apiSessionAdded);
    const body = decodeBody<ApiSessionAdded>('edge.ApiSessionAdded', message.body);
    if (!body.isFullState) continue;
    const chunk = {
      body,
      strategy: message.headers.get(Header.syncStrategyType)!.toString('utf8'),
      state: message.headers.get(Header.syncStrategyState)!.toString('utf8'),
    };
    chunks.push(chunk);
    if (JSON.parse(chunk.state).isLast === true) return chunks;
  }
}

/** The first incremental (not full-state) message of `contentType` naming the session, and how long it took. */
async function incremental<T>(
  end: RouterEnd,
  contentType: number,
  typeName: string,
  names: (body: T) => boolean,
  timeoutMs = 8_000,
): Promise<{ body: T; message: ChannelMessage; afterMs: number }> {
  const started = Date.now();
  for (;;) {
    const message = await nextOf(end, contentType, timeoutMs - (Date.now() - started));
    const body = decodeBody<T & { isFullState?: boolean }>(typeName, message.body);
    if (body.isFullState !== true && names(body)) return { body, message, afterMs: Date.now() - started };
  }
}

const certLogin = async () => {
  const response = await controller().call('POST', `${C}/authenticate?method=cert`, {
    body: {},
    cert: device.credentials,
  });
  expect(response.status, response.text).toBe(200);
  return { token: response.body.data.token as string, id: response.body.data.id as string };
};

/** The session of this id among those a message names (one message may name several changed together). */
const sessionOf = (apiSessions: readonly ApiSession[], id: string) =>
  apiSessions.find((apiSession) => apiSession.id === id);

/** The token a removal names beside this id (the router pairs `tokens[i]` with `ids[i]`). */
function tokenRemoved(body: { tokens: string[]; ids: string[] }, id: string): string | undefined {
  expect(body.tokens).toHaveLength(body.ids.length);
  return body.tokens[body.ids.indexOf(id)];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("the routers' API sessions (ApiSessionAdded / Updated / Removed on the control channel)", () => {
  it('sends a router that comes online every live API session, with the token the login returned and the fingerprints of its identity', async () => {
    const session = await certLogin();
    const end = await connected();

    const chunks = await fullSync(end);

    const [only] = chunks;
    expect(chunks).toHaveLength(1);
    expect(only!.strategy).toBe('instant');
    const state = JSON.parse(only!.state);
    expect(only!.state).toBe(JSON.stringify({ id: state.id, isLast: true, sequence: 0 }));
    expect(state.id).toMatch(UUID);
    const sent = only!.body.apiSessions.find((apiSession) => apiSession.id === session.id);
    expect(sent).toEqual({
      token: session.token,
      certFingerprints: [sha1Of(device.credentials.cert)],
      id: session.id,
      identityId: device.id,
    });
    end.socket.destroy();
  });

  it('sends a login made after the router connected within the time the router waits for it, and each end of a session', async () => {
    const end = await connected();
    await fullSync(end);

    const session = await certLogin();
    const added = await incremental<ApiSessionAdded>(end, ContentType.apiSessionAdded, 'edge.ApiSessionAdded', (body) =>
      body.apiSessions.some((apiSession) => apiSession.id === session.id),
    );
    expect(added.afterMs).toBeLessThan(ROUTER_LOOKUP_TIMEOUT_MS);
    expect(added.message.headers.get(Header.syncStrategyType)?.toString()).toBe('instant');
    // With it may come others changed in the last seconds (the poll reads a window; a router takes a session again).
    expect(added.body.apiSessions).toContainEqual({
      token: session.token,
      certFingerprints: [sha1Of(device.credentials.cert)],
      id: session.id,
      identityId: device.id,
    });

    // Its logout.
    const loggedOut = await controller().call('DELETE', `${C}/current-api-session`, { token: session.token });
    expect(loggedOut.status, loggedOut.text).toBe(200);
    const removed = await incremental<{ tokens: string[]; ids: string[] }>(
      end,
      ContentType.apiSessionRemoved,
      'edge.ApiSessionRemoved',
      (body) => body.ids.includes(session.id),
    );
    expect(tokenRemoved(removed.body, session.id)).toBe(session.token);
    expect(removed.afterMs).toBeLessThan(ROUTER_LOOKUP_TIMEOUT_MS);

    // An admin's delete of another.
    const other = await certLogin();
    await incremental<ApiSessionAdded>(end, ContentType.apiSessionAdded, 'edge.ApiSessionAdded', (body) =>
      body.apiSessions.some((apiSession) => apiSession.id === other.id),
    );
    expect((await call('DELETE', `/api-sessions/${other.id}`)).status).toBe(200);
    const deleted = await incremental<{ tokens: string[]; ids: string[] }>(
      end,
      ContentType.apiSessionRemoved,
      'edge.ApiSessionRemoved',
      (body) => body.ids.includes(other.id),
    );
    expect(tokenRemoved(deleted.body, other.id)).toBe(other.token);
    end.socket.destroy();
  });

  it('tells the routers of the sessions a deleted identity ends (the removal is written with the deletion)', async () => {
    const policyId = await createPolicy(authPolicyBody(unique('sync-delete')));
    const user = await userUnder(policyId, unique('sync-delete-user'));
    const end = await connected();
    await fullSync(end);
    const loggedIn = await clientLogin(user.username, user.password);
    expect(loggedIn.status, loggedIn.text).toBe(200);
    const sessionId = loggedIn.body.data.id as string;
    await incremental<ApiSessionAdded>(end, ContentType.apiSessionAdded, 'edge.ApiSessionAdded', (body) =>
      body.apiSessions.some((apiSession) => apiSession.id === sessionId),
    );

    expect((await call('DELETE', `/identities/${user.identityId}`)).status).toBe(200);
    const removed = await incremental<{ tokens: string[]; ids: string[] }>(
      end,
      ContentType.apiSessionRemoved,
      'edge.ApiSessionRemoved',
      (body) => body.ids.includes(sessionId),
    );
    expect(tokenRemoved(removed.body, sessionId)).toBe(loggedIn.body.data.token);
    end.socket.destroy();
  });

  it('sends a session that waits for its TOTP code only once the code is given', async () => {
    const policyId = await createPolicy(authPolicyBody(unique('sync-mfa')));
    const user = await userUnder(policyId, unique('sync-mfa-user'));
    const first = await clientLogin(user.username, user.password);
    const firstToken = first.body.data.token as string;
    expect((await controller().call('POST', `${C}/current-identity/mfa`, { token: firstToken })).status).toBe(201);
    const detail = await controller().call('GET', `${C}/current-identity/mfa`, { token: firstToken });
    const secret = new URL(detail.body.data.provisioningUrl).searchParams.get('secret')!;
    const codeNow = () => generate({ secret, epoch: Math.floor(controller().deps.now().getTime() / 1000) });
    const verified = await controller().call('POST', `${C}/current-identity/mfa/verify`, {
      token: firstToken,
      body: { code: await codeNow() },
    });
    expect(verified.status, verified.text).toBe(200);
    controller().advanceClock(30_000);
    const end = await connected();
    await fullSync(end);

    const partial = await clientLogin(user.username, user.password);
    const partialToken = partial.body.data.token as string;
    const partialId = partial.body.data.id as string;
    expect(partial.body.data.authQueries).toHaveLength(1);
    // Not sent while it is partial: not as it is written, nor in a full sync.
    await expect(
      incremental<ApiSessionAdded>(
        end,
        ContentType.apiSessionAdded,
        'edge.ApiSessionAdded',
        (body) => body.apiSessions.some((apiSession) => apiSession.id === partialId),
        2_500,
      ),
    ).rejects.toThrow(/no message/);
    end.send({
      contentType: ContentType.requestClientReSync,
      sequence: 50,
      body: encodeBody('edge.RequestClientReSync', { reason: 'test' }),
    });
    const resynced = (await fullSync(end)).flatMap((chunk) => chunk.body.apiSessions);
    expect(resynced.map((apiSession) => apiSession.id)).not.toContain(partialId);

    const passed = await controller().call('POST', `${C}/authenticate/mfa`, {
      token: partialToken,
      body: { code: await codeNow() },
    });
    expect(passed.status, passed.text).toBe(200);
    const added = await incremental<ApiSessionAdded>(end, ContentType.apiSessionAdded, 'edge.ApiSessionAdded', (body) =>
      body.apiSessions.some((apiSession) => apiSession.id === partialId),
    );
    expect(added.afterMs).toBeLessThan(ROUTER_LOOKUP_TIMEOUT_MS);
    expect(sessionOf(added.body.apiSessions, partialId)).toEqual({
      token: partialToken,
      certFingerprints: [],
      id: partialId,
      identityId: user.identityId,
    });
    end.socket.destroy();
  });

  it('syncs again when the router asks (RequestClientReSync), under a sync id that orders after the first', async () => {
    const session = await certLogin();
    const end = await connected();
    const [first] = await fullSync(end);

    end.send({
      contentType: ContentType.requestClientReSync,
      sequence: 7,
      body: encodeBody('edge.RequestClientReSync', { reason: 'error during api session sync: timeout' }),
    });
    const again = await fullSync(end);

    const firstId = JSON.parse(first!.state).id as string;
    const againId = JSON.parse(again[0]!.state).id as string;
    expect(againId > firstId).toBe(true);
    const sent = again.flatMap((chunk) => chunk.body.apiSessions).find((apiSession) => apiSession.id === session.id);
    expect(sent?.token).toBe(session.token);
    end.socket.destroy();
  });

  it("tells the routers of a session's new ephemeral certificate (ApiSessionUpdated with its fingerprint)", async () => {
    const session = await certLogin();
    const end = await connected();
    await fullSync(end);
    const { csrFor } = await import('../support/pki-fixtures.ts');
    const { csr } = await csrFor(device.id);

    const created = await controller().call('POST', `${C}/current-api-session/certificates`, {
      token: session.token,
      body: { csr },
    });
    expect(created.status, created.text).toBe(201);

    const updated = await incremental<{ apiSessions: ApiSession[] }>(
      end,
      ContentType.apiSessionUpdated,
      'edge.ApiSessionUpdated',
      (body) => body.apiSessions.some((apiSession) => apiSession.id === session.id),
    );
    expect(updated.afterMs).toBeLessThan(ROUTER_LOOKUP_TIMEOUT_MS);
    expect(sessionOf(updated.body.apiSessions, session.id)).toEqual({
      token: session.token,
      certFingerprints: [sha1Of(device.credentials.cert), sha1Of(created.body.data.certificate as string)],
      id: session.id,
      identityId: device.id,
    });
    end.socket.destroy();
  });
  it("tells the routers of an identity's extended certificate: each of its sessions again, with the new fingerprint", async () => {
    const renewing = await enrolledDevice(controller, call, unique('sync-renewing-device'));
    const login = await controller().call('POST', `${C}/authenticate?method=cert`, {
      body: {},
      cert: renewing.credentials,
    });
    expect(login.status, login.text).toBe(200);
    const session = { token: login.body.data.token as string, id: login.body.data.id as string };
    const end = await connected();
    await fullSync(end);
    const authenticators = await controller().call('GET', `${C}/current-identity/authenticators`, {
      token: session.token,
    });
    const authenticatorId = authenticators.body.data.find((each: { method: string }) => each.method === 'cert').id;
    const extendPath = `${C}/current-identity/authenticators/${authenticatorId}`;
    const next = await csrFor('sync-renewed');
    const extended = await controller().call('POST', `${extendPath}/extend`, {
      token: session.token,
      cert: renewing.credentials,
      body: { clientCertCsr: next.csr },
    });
    expect(extended.status, extended.text).toBe(200);
    const renewed = { key: next.key, cert: leafOf(extended.body.data.clientCert) };
    const verified = await controller().call('POST', `${extendPath}/extend-verify`, {
      token: session.token,
      cert: renewed,
      body: { clientCert: renewed.cert },
    });
    expect(verified.status, verified.text).toBe(200);

    const updated = await incremental<{ apiSessions: ApiSession[] }>(
      end,
      ContentType.apiSessionUpdated,
      'edge.ApiSessionUpdated',
      (body) =>
        body.apiSessions.some(
          (apiSession) => apiSession.id === session.id && apiSession.certFingerprints.includes(sha1Of(renewed.cert)),
        ),
    );
    expect(sessionOf(updated.body.apiSessions, session.id)?.certFingerprints).toEqual([sha1Of(renewed.cert)]);
    end.socket.destroy();
  });
  it('never sends an OIDC session: not in the full state, not when stored, not when it ends', async () => {
    const [oidcBefore] = await storeApiSessions(controller().deps, device.id, 1, 0, undefined, { kind: 'oidc' });
    const [legacyBefore] = await storeApiSessions(controller().deps, device.id, 1);
    const end = await connected();

    const held = (await fullSync(end)).flatMap((chunk) => chunk.body.apiSessions.map((apiSession) => apiSession.id));

    expect(held).toContain(legacyBefore!.id);
    expect(held).not.toContain(oidcBefore!.id);
    // Stored after the router connected, each OIDC session before a legacy one: every message up to the legacy one's is
    // read, and none names an OIDC session.
    const named: string[] = [];
    async function readUntil(contentType: number, typeName: string, id: string): Promise<void> {
      for (;;) {
        const message = await nextOf(end, contentType);
        const body = decodeBody<{ apiSessions?: ApiSession[]; ids?: string[] }>(typeName, message.body);
        const ids = body.ids ?? (body.apiSessions ?? []).map((apiSession) => apiSession.id);
        named.push(...ids);
        if (ids.includes(id)) return;
      }
    }
    const [oidcAfter] = await storeApiSessions(controller().deps, device.id, 1, 0, undefined, { kind: 'oidc' });
    const [legacyAfter] = await storeApiSessions(controller().deps, device.id, 1);
    await readUntil(ContentType.apiSessionAdded, 'edge.ApiSessionAdded', legacyAfter!.id);
    for (const { id } of [oidcBefore!, oidcAfter!, legacyAfter!]) {
      expect((await call('DELETE', `/api-sessions/${id}`)).status).toBe(200);
    }
    await readUntil(ContentType.apiSessionRemoved, 'edge.ApiSessionRemoved', legacyAfter!.id);

    expect(named).not.toContain(oidcBefore!.id);
    expect(named).not.toContain(oidcAfter!.id);
    end.socket.destroy();
  });

  it('passes each change of a burst on once, reading it a bounded number of times however many polls run', async () => {
    const end = await connected();
    await fullSync(end);
    const deliveries = new Map<string, number>();
    let burst: { id: string }[] = [];

    const sent = await recordSent(controller().deps.store.db, async () => {
      burst = await storeApiSessions(controller().deps, device.id, BURST_SIZE);
      // Long past the grace: every poll of this span could read the burst again if each read its whole window.
      const until = Date.now() + BURST_WATCH_MS;
      for (;;) {
        const left = until - Date.now();
        if (left <= 0) break;
        const message = await end.next(left).catch(() => undefined);
        if (message?.contentType !== ContentType.apiSessionAdded) continue;
        const body = decodeBody<ApiSessionAdded>('edge.ApiSessionAdded', message.body);
        if (body.isFullState) continue;
        for (const { id } of body.apiSessions) deliveries.set(id, (deliveries.get(id) ?? 0) + 1);
      }
    });

    const burstIds = new Set(burst.map(({ id }) => id));
    expect(burst.map(({ id }) => deliveries.get(id))).toEqual(burst.map(() => 1));
    const polls = sent.filter(
      ({ command, input }) =>
        command === 'QueryCommand' &&
        String((input.ExpressionAttributeValues as Record<string, unknown>)[':bucket']).startsWith('SESSIONCHANGES#'),
    );
    expect(polls.length).toBeGreaterThanOrEqual(BURST_WATCH_MS / POLL_INTERVAL_MS / 2);
    expect(polls.every(({ input }) => input.Limit === CHANGE_PAGE_SIZE)).toBe(true);
    const readsOf = new Map<string, number>();
    for (const { output } of polls) {
      // Sessions' changes only: the bucket holds the other notices of the span too (an identity's reach, say).
      for (const item of (output?.Items ?? []) as { sessions?: { id: string }[] }[]) {
        const id = item.sessions?.[0]?.id;
        if (id !== undefined && burstIds.has(id)) readsOf.set(id, (readsOf.get(id) ?? 0) + 1);
      }
    }
    // Read by the polls within the grace of its writing (and one more across a poll's own span), not by every poll.
    const mostReads = Math.ceil(POLL_GRACE_MS / POLL_INTERVAL_MS) + 2;
    expect(Math.max(...readsOf.values())).toBeLessThanOrEqual(mostReads);
    expect(readsOf.size).toBe(BURST_SIZE);
    end.socket.destroy();
  }, 60_000);

  it('sends more than a chunk in chunks of 100, numbered from 0, the last marked', async () => {
    const stored = await storeApiSessions(controller().deps, device.id, 150);
    const end = await connected();

    const chunks = await fullSync(end);

    expect(chunks.length).toBeGreaterThanOrEqual(2);
    const states = chunks.map((chunk) => JSON.parse(chunk.state));
    expect(new Set(states.map((state) => state.id)).size).toBe(1);
    expect(states.map((state) => state.sequence)).toEqual(chunks.map((_, index) => index));
    expect(states.map((state) => state.isLast)).toEqual(chunks.map((_, index) => index === chunks.length - 1));
    expect(chunks.every((chunk) => chunk.body.apiSessions.length <= 100)).toBe(true);
    expect(chunks.slice(0, -1).every((chunk) => chunk.body.apiSessions.length === 100)).toBe(true);
    const tokenById = new Map(chunks.flatMap((chunk) => chunk.body.apiSessions.map((s) => [s.id, s.token])));
    for (const { id, token } of stored) expect(tokenById.get(id)).toBe(token);
    end.socket.destroy();
    // Last in the file: the sessions it stored stay, no later test reading them.
  }, 120_000);
});
