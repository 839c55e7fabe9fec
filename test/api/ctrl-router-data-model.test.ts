import { X509Certificate } from 'node:crypto';
import { decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTER_FRAME_LIMITS } from '#ctrl-channel/frame-codec.ts';
import { type ChannelMessage, ContentType, Header } from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { buildRouterDataState } from '#ctrl-channel/router-data-state.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { type Credentials, dialCtrl, enrolledEdgeRouter, type RouterEnd } from '../support/ctrl-router.ts';

const { controller, call, createdId } = useAdminController();

interface DecodedDataState {
  events: {
    action: string;
    publicKey?: { data: Buffer; kid: string; usages: string[]; format: string };
    identity?: {
      id: string;
      name: string;
      disabled: boolean;
      defaultHostingCost: number;
      defaultHostingPrecedence: string;
      serviceHostingCosts: Record<string, number>;
      serviceHostingPrecedences: Record<string, string>;
      appDataJson: Buffer;
    };
    service?: { id: string; name: string; encryptionRequired: boolean; configs: string[] };
    servicePolicy?: { id: string; name: string; policyType: string };
    servicePolicyChange?: { policyId: string; relatedEntityIds: string[]; relatedEntityType: string; add: boolean };
    postureCheck?: { id: string; name: string; typeId: string; mac?: { macAddresses: string[] } };
    configType?: object;
    config?: object;
  }[];
  endIndex: number;
  timelineId: string;
}

let counter = 0;
const unique = (name: string) => `${name}-${++counter}-${Date.now().toString(36)}`;

let router: { id: string; credentials: Credentials };
let other: { id: string; credentials: Credentials };
const tag = unique('rdm');

/** A user with a password login and these role attributes: its id, name and API session token. */
async function user(roleAttributes: string[], fields: Record<string, unknown> = {}) {
  const name = unique('rdm-user');
  const id = await createdId('/identities', { name, type: 'User', isAdmin: false, roleAttributes, ...fields });
  await createdId('/authenticators', { identityId: id, method: 'updb', username: name, password: `${name}-Pw1!` });
  return { id, name, password: `${name}-Pw1!` };
}

beforeAll(async () => {
  router = await enrolledEdgeRouter(controller, call, unique('rdm-er'));
  other = await enrolledEdgeRouter(controller, call, unique('rdm-other-er'));
  // The tag's users may use the first router (by id), and only it; the second router no identity may use.
  await createdId('/edge-router-policies', {
    name: unique('rdm-erp'),
    semantic: 'AnyOf',
    identityRoles: [`#${tag}-users`],
    edgeRouterRoles: [`@${router.id}`],
  });
});

/** A router's channel, hello accepted, heartbeats answered. */
async function connected(which: { id: string; credentials: Credentials } = router): Promise<RouterEnd> {
  const end = await dialCtrl(controller(), which.credentials, { answerHeartbeats: true });
  await end.hello(which.id);
  return end;
}

let sequence = 100;
function subscribe(
  end: RouterEnd,
  request: { subscriptionId: string; renew?: boolean; timelineId?: string; currentIndex?: number },
): void {
  end.send({
    contentType: ContentType.subscribeToDataModelRequest,
    sequence: ++sequence,
    body: encodeBody('edge.SubscribeToDataModelRequest', { subscriptionDurationSeconds: 300, ...request }),
  });
}

/** The next DataState the controller sends (what else it sends meanwhile is skipped), with its subscription id. */
async function nextDataState(end: RouterEnd, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  let message: ChannelMessage;
  do message = await end.next(Math.max(1, deadline - Date.now()));
  while (message.contentType !== ContentType.dataState);
  return {
    subscriptionId: message.headers.get(Header.routerDataModelSubscriptionId)?.toString('utf8'),
    state: decodeBody<DecodedDataState>('edge.DataState', message.body),
  };
}

const identitiesOf = (state: DecodedDataState) => state.events.flatMap((event) => event.identity ?? []);
const keysOf = (state: DecodedDataState) => state.events.flatMap((event) => event.publicKey ?? []);

describe('the router data model (SubscribeToDataModelRequest → DataState)', () => {
  it("answers a subscription with the key that verifies a Dial session's JWT, and the identities of the router's policies", async () => {
    const alice = await user([`${tag}-users`], {
      defaultHostingCost: 12,
      defaultHostingPrecedence: 'required',
      appData: { team: 'blue' },
    });
    const outsider = await user([`${unique('rdm-nobody')}`]);
    const serviceId = await createdId('/services', { name: unique('rdm-svc'), roleAttributes: [`${tag}-svc`] });
    await createdId('/service-policies', {
      name: unique('rdm-sp'),
      semantic: 'AnyOf',
      type: 'Dial',
      identityRoles: [`#${tag}-users`],
      serviceRoles: [`#${tag}-svc`],
    });
    await createdId('/service-edge-router-policies', {
      name: unique('rdm-serp'),
      semantic: 'AnyOf',
      serviceRoles: [`#${tag}-svc`],
      edgeRouterRoles: [`@${router.id}`],
    });
    const token = await controller().login(alice.name, alice.password);
    const session = await controller().call('POST', '/edge/client/v1/sessions', {
      token,
      body: { serviceId, type: 'Dial' },
    });
    expect(session.status).toBe(201);
    const end = await connected();

    subscribe(end, { subscriptionId: 'sub-first' });
    const { subscriptionId, state } = await nextDataState(end);

    expect(subscriptionId).toBe('sub-first');
    expect(state.endIndex).toBeGreaterThanOrEqual(1);
    expect(state.timelineId.length).toBeGreaterThan(0);
    // The key the router finds by the JWT's kid, with the usage it requires, verifies the session's token as ES256.
    const jwt = session.body.data.token as string;
    const { kid } = decodeProtectedHeader(jwt);
    const sessionKey = keysOf(state).find((key) => key.kid === kid);
    expect(sessionKey).toMatchObject({ usages: ['JWTValidation'], format: 'PKIXPublicKey' });
    const spki = `-----BEGIN PUBLIC KEY-----\n${sessionKey!.data.toString('base64')}\n-----END PUBLIC KEY-----`;
    const { payload } = await jwtVerify(jwt, await importSPKI(spki, 'ES256'), { audience: 'openziti' });
    expect(payload).toMatchObject({ sub: serviceId, z_st: 'Dial', z_iid: alice.id, z_leg: true, z_t: 's' });
    // The network's root CA, as the reference publishes its CAs: the certificate's DER, named by its SHA-1.
    const root = new X509Certificate(controller().rootCertPem);
    expect(keysOf(state)).toContainEqual({
      data: root.raw,
      kid: root.fingerprint.replaceAll(':', '').toLowerCase(),
      usages: ['ClientX509CertValidation'],
      format: 'X509CertDer',
    });
    // Only those who may use this router: alice, by its policy; not the outsider, not the admin.
    const identities = identitiesOf(state);
    expect(identities.map((identity) => identity.id)).toEqual([alice.id]);
    expect(identities[0]).toMatchObject({
      id: alice.id,
      name: alice.name,
      disabled: false,
      defaultHostingCost: 12,
      defaultHostingPrecedence: 'Required',
    });
    expect(JSON.parse(identities[0]!.appDataJson.toString())).toEqual({ team: 'blue' });
    expect(identities.map((identity) => identity.id)).not.toContain(outsider.id);
    // The policy that grants alice the service, related to her (the next tests look at the policy part closely).
    expect(state.events.flatMap((event) => event.service ?? []).map((service) => service.id)).toEqual([serviceId]);

    // Another router no policy lets anyone use gets the keys, on the same timeline, and no identity.
    const second = await connected(other);
    subscribe(second, { subscriptionId: 'sub-other' });
    const answer = await nextDataState(second);
    expect(answer.subscriptionId).toBe('sub-other');
    expect(answer.state.timelineId).toBe(state.timelineId);
    expect(identitiesOf(answer.state)).toEqual([]);
    expect(keysOf(answer.state).map((key) => key.kid)).toContain(kid);
    end.socket.destroy();
    second.socket.destroy();
  });

  it('answers a renewal with nothing when the model is unchanged, and with a newer full state once an identity is disabled or deleted', async () => {
    const bob = await user([`${tag}-users`]);
    const end = await connected();
    subscribe(end, { subscriptionId: 'sub-renew' });
    const first = (await nextDataState(end)).state;
    expect(identitiesOf(first).find((identity) => identity.id === bob.id)?.disabled).toBe(false);

    // Up to date: nothing (a wrong answer would come within milliseconds, as the first did).
    subscribe(end, {
      subscriptionId: 'sub-renew',
      renew: true,
      timelineId: first.timelineId,
      currentIndex: first.endIndex,
    });
    await expect(nextDataState(end, 1_500)).rejects.toThrow(/no message/);

    expect((await call('POST', `/identities/${bob.id}/disable`, { durationMinutes: 0 })).status).toBe(200);
    subscribe(end, {
      subscriptionId: 'sub-renew',
      renew: true,
      timelineId: first.timelineId,
      currentIndex: first.endIndex,
    });
    const afterDisable = await nextDataState(end);

    expect(afterDisable.subscriptionId).toBe('sub-renew');
    expect(afterDisable.state.endIndex).toBeGreaterThan(first.endIndex);
    expect(afterDisable.state.timelineId).toBe(first.timelineId);
    expect(identitiesOf(afterDisable.state).find((identity) => identity.id === bob.id)?.disabled).toBe(true);

    expect((await call('DELETE', `/identities/${bob.id}`)).status).toBe(200);
    subscribe(end, {
      subscriptionId: 'sub-renew',
      renew: true,
      timelineId: first.timelineId,
      currentIndex: afterDisable.state.endIndex,
    });
    const afterDelete = await nextDataState(end);
    expect(afterDelete.state.endIndex).toBeGreaterThan(afterDisable.state.endIndex);
    expect(identitiesOf(afterDelete.state).map((identity) => identity.id)).not.toContain(bob.id);

    // A router on another timeline (a model of another network) is sent the full state, renewal or not.
    subscribe(end, { subscriptionId: 'sub-renew', renew: true, timelineId: 'elsewhere', currentIndex: 5 });
    const resynced = await nextDataState(end);
    expect(resynced.state.timelineId).toBe(first.timelineId);
    expect(resynced.state.endIndex).toBeGreaterThan(afterDelete.state.endIndex);
    end.socket.destroy();
  });

  it('keeps the model within the message budget: the identities that do not fit are left out, in id order, counted', async () => {
    // The real budget is the 4 MiB frame limit, which some seventy identities of the largest app data fill: too slow to
    // write here, so the same build is asked for a budget a few identities fill.
    const crowded = await enrolledEdgeRouter(controller, call, unique('rdm-crowded-er'));
    const crowd = unique('rdm-crowd');
    await createdId('/edge-router-policies', {
      name: unique('rdm-erp'),
      semantic: 'AnyOf',
      identityRoles: [`#${crowd}`],
      edgeRouterRoles: [`@${crowded.id}`],
    });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        await createdId('/identities', {
          name: unique('rdm-big'),
          type: 'Device',
          isAdmin: false,
          roleAttributes: [crowd],
          appData: { blob: 'x'.repeat(2_000) },
        }),
      );
    }
    const asRouter = { id: crowded.id, name: 'crowded', kind: 'edge-router', fingerprint: '' } as const;
    const encoded = (events: readonly object[]) =>
      encodeBody('edge.DataState', { events, endIndex: Date.now(), timelineId: 'x'.repeat(22) });
    const full = await buildRouterDataState(controller().deps, asRouter, ROUTER_FRAME_LIMITS.maxBodyBytes);
    expect(full).toMatchObject({ identityCount: 5, omittedIdentities: 0 });
    const budget = encoded(full.events).length - 5_000;

    const bounded = await buildRouterDataState(controller().deps, asRouter, budget);

    expect(encoded(bounded.events).length).toBeLessThanOrEqual(budget);
    expect(bounded.identityCount).toBeGreaterThan(0);
    expect(bounded.identityCount + bounded.omittedIdentities).toBe(5);
    const sent = bounded.events.flatMap((event) =>
      'identity' in event ? [(event.identity as { id: string }).id] : [],
    );
    expect(sent).toEqual([...ids].sort().slice(0, bounded.identityCount));
    expect(bounded.events.filter((event) => 'publicKey' in event)).toHaveLength(3);
    expect(bounded.digest).not.toBe(full.digest);
  });

  it('gives a router without a tunneler the policy part of every identity that may use it: their Dial and Bind policies with the services, posture checks and identities each relates to, none of those that may not use it, no configs', async () => {
    const plain = await enrolledEdgeRouter(controller, call, unique('rdm-policy-er'));
    const t = unique('rdm-policy');
    await createdId('/edge-router-policies', {
      name: unique('rdm-erp'),
      semantic: 'AnyOf',
      identityRoles: [`#${t}-users`],
      edgeRouterRoles: [`@${plain.id}`],
    });
    const dialer = await user([`${t}-users`, `${t}-dialers`]);
    const binder = await user([`${t}-users`]);
    const outsider = await user([`${t}-dialers`]);
    const hostV1 = (await call('GET', `/config-types?filter=${encodeURIComponent('name = "host.v1"')}`)).body.data[0]
      .id;
    const config = await createdId('/configs', {
      name: unique('rdm-host'),
      configTypeId: hostV1,
      data: { protocol: 'tcp', address: '127.0.0.1', port: 18465 },
    });
    const dialed = await createdId('/services', { name: unique('rdm-dialed'), roleAttributes: [`${t}-dialed`] });
    const bound = await createdId('/services', {
      name: unique('rdm-bound'),
      roleAttributes: [`${t}-bound`],
      configs: [config],
    });
    const elsewhere = await createdId('/services', { name: unique('rdm-elsewhere'), roleAttributes: [`${t}-other`] });
    const check = await createdId('/posture-checks', {
      name: unique('rdm-mac'),
      typeId: 'MAC',
      macAddresses: ['a0b1c2d3e4f5'],
      roleAttributes: [`${t}-check`],
    });
    const policy = (body: Record<string, unknown>) =>
      createdId('/service-policies', { name: unique('rdm-sp'), semantic: 'AnyOf', postureCheckRoles: [], ...body });
    const dial = await policy({
      type: 'Dial',
      identityRoles: [`#${t}-dialers`],
      serviceRoles: [`#${t}-dialed`],
      postureCheckRoles: [`#${t}-check`],
    });
    const bind = await policy({
      type: 'Bind',
      semantic: 'AllOf',
      identityRoles: [`@${binder.id}`],
      serviceRoles: [`#${t}-bound`],
    });
    // AllOf: only an identity with both attributes (the binder has one of them).
    const both = await policy({
      type: 'Dial',
      semantic: 'AllOf',
      identityRoles: [`#${t}-users`, `#${t}-dialers`],
      serviceRoles: [`#${t}-dialed`],
    });
    const outsiders = await policy({ type: 'Dial', identityRoles: [`@${outsider.id}`], serviceRoles: [`#${t}-other`] });
    const end = await connected(plain);

    subscribe(end, { subscriptionId: 'sub-policies' });
    const { state } = await nextDataState(end);

    expect(identitiesOf(state).map((identity) => identity.id)).toEqual([binder.id, dialer.id].sort());
    expect(identitiesOf(state).every((identity) => identity.disabled === false)).toBe(true);
    expect(state.events.flatMap((event) => event.service ?? [])).toEqual(
      [
        { id: dialed, name: expect.any(String), encryptionRequired: true, configs: [] },
        { id: bound, name: expect.any(String), encryptionRequired: true, configs: [] },
      ].sort((a, b) => (a.id < b.id ? -1 : 1)),
    );
    expect(state.events.flatMap((event) => event.postureCheck ?? [])).toEqual([
      { id: check, name: expect.any(String), typeId: 'MAC', mac: { macAddresses: ['a0b1c2d3e4f5'] } },
    ]);
    const policies = state.events.flatMap((event) => event.servicePolicy ?? []);
    expect(policies.map(({ id, policyType }) => ({ id, policyType }))).toEqual(
      [
        { id: dial, policyType: 'DialPolicy' },
        { id: bind, policyType: 'BindPolicy' },
        { id: both, policyType: 'DialPolicy' },
      ].sort((a, b) => (a.id < b.id ? -1 : 1)),
    );
    const related = (policyId: string) =>
      state.events.flatMap((event) =>
        event.servicePolicyChange?.policyId === policyId
          ? [[event.servicePolicyChange.relatedEntityType, event.servicePolicyChange.relatedEntityIds]]
          : [],
      );
    // The outsider may dial too, but may not use this router: only the dialer is related.
    expect(related(dial)).toEqual([
      ['RelatedService', [dialed]],
      ['RelatedPostureCheck', [check]],
      ['RelatedIdentity', [dialer.id]],
    ]);
    expect(related(both)).toEqual([
      ['RelatedService', [dialed]],
      ['RelatedPostureCheck', []],
      ['RelatedIdentity', [dialer.id]],
    ]);
    expect(related(bind)).toEqual([
      ['RelatedService', [bound]],
      ['RelatedPostureCheck', []],
      ['RelatedIdentity', [binder.id]],
    ]);
    expect(JSON.stringify(state.events)).not.toContain(outsiders);
    expect(JSON.stringify(state.events)).not.toContain(elsewhere);
    expect(state.events.some((event) => event.config ?? event.configType)).toBe(false);
    // The order a full state is applied in: identities, services, posture checks, then each policy with its relations.
    const kinds = state.events.map((event) =>
      Object.keys(event).find((key) => key !== 'action' && key !== 'isSynthetic'),
    );
    expect(kinds).toEqual([
      ...kinds.filter((kind) => kind === 'publicKey'),
      'identity',
      'identity',
      'service',
      'service',
      'postureCheck',
      ...policies.flatMap(() => ['servicePolicy', 'servicePolicyChange', 'servicePolicyChange', 'servicePolicyChange']),
    ]);
    end.socket.destroy();
  });

  it('leaves the policy part out whole when it does not fit beside every identity, and still sends every identity', async () => {
    const crowded = await enrolledEdgeRouter(controller, call, unique('rdm-policy-crowded-er'));
    const crowd = unique('rdm-policy-crowd');
    await createdId('/edge-router-policies', {
      name: unique('rdm-erp'),
      semantic: 'AnyOf',
      identityRoles: [`#${crowd}`],
      edgeRouterRoles: [`@${crowded.id}`],
    });
    const members = [await user([crowd]), await user([crowd])];
    for (let i = 0; i < 3; i++) {
      const roles = [`${crowd}-svc-${i}`];
      await createdId('/services', { name: unique('rdm-crowd-svc'), roleAttributes: roles });
      await createdId('/service-policies', {
        name: unique('rdm-crowd-sp'),
        semantic: 'AnyOf',
        type: 'Dial',
        identityRoles: [`#${crowd}`],
        serviceRoles: [`#${roles[0]}`],
        postureCheckRoles: [],
      });
    }
    const asRouter = { id: crowded.id, name: 'crowded', kind: 'edge-router', fingerprint: '' } as const;
    const encoded = (events: readonly object[]) =>
      encodeBody('edge.DataState', { events, endIndex: Date.now(), timelineId: 'x'.repeat(22) });
    const full = await buildRouterDataState(controller().deps, asRouter, ROUTER_FRAME_LIMITS.maxBodyBytes);
    expect(full.policies).toMatchObject({ omitted: false, identities: 2, services: 3, servicePolicies: 3 });
    const withoutPolicies = full.events.filter((event) => 'publicKey' in event || 'identity' in event);
    // Room for every identity and a part of the policies, not all of them.
    const budget = encoded(withoutPolicies).length + 300;
    expect(encoded(full.events).length).toBeGreaterThan(budget);

    const bounded = await buildRouterDataState(controller().deps, asRouter, budget);

    expect(bounded.policies).toMatchObject({ omitted: true, servicePolicies: 3 });
    expect(bounded.events).toEqual(withoutPolicies);
    expect(bounded).toMatchObject({ identityCount: 2, omittedIdentities: 0 });
    expect(bounded.identityIds).toEqual(members.map((member) => member.id).sort());
    expect(bounded.digest).not.toBe(full.digest);
  });

  it("pushes a fresh full state to a router without a tunneler within seconds of a change to its identities' policies, and of a disable, an enable and a delete", async () => {
    const pushed = await enrolledEdgeRouter(controller, call, unique('rdm-push-er'));
    const t = unique('rdm-push');
    await createdId('/edge-router-policies', {
      name: unique('rdm-erp'),
      semantic: 'AnyOf',
      identityRoles: [`#${t}`],
      edgeRouterRoles: [`@${pushed.id}`],
    });
    const carol = await user([t]);
    const first = await createdId('/services', { name: unique('rdm-push-svc'), roleAttributes: [`${t}-first`] });
    const second = await createdId('/services', { name: unique('rdm-push-svc'), roleAttributes: [`${t}-second`] });
    const dial = await createdId('/service-policies', {
      name: unique('rdm-push-sp'),
      semantic: 'AnyOf',
      type: 'Dial',
      identityRoles: [`#${t}`],
      serviceRoles: [`#${t}-first`],
      postureCheckRoles: [],
    });
    const end = await connected(pushed);
    subscribe(end, { subscriptionId: 'sub-push' });
    const { state: initial } = await nextDataState(end);
    const servicesOf = (state: DecodedDataState) => state.events.flatMap((event) => event.service ?? []);
    expect(servicesOf(initial).map((service) => service.id)).toEqual([first]);
    const carolOf = (state: DecodedDataState) => identitiesOf(state).find((identity) => identity.id === carol.id);
    /** The first pushed state that passes `check` (earlier ones came before the change settled), and how long it took. */
    async function pushedWhere(check: (state: DecodedDataState) => boolean) {
      const started = Date.now();
      for (;;) {
        const answer = await nextDataState(end, Math.max(1, 8_000 - (Date.now() - started)));
        expect(answer.subscriptionId).toBe('sub-push');
        if (check(answer.state)) return { state: answer.state, afterMs: Date.now() - started };
      }
    }

    // The policy grants the second service too.
    const patched = await call('PATCH', `/service-policies/${dial}`, { serviceRoles: [`#${t}-first`, `#${t}-second`] });
    expect(patched.status).toBe(200);
    const granted = await pushedWhere((state) => servicesOf(state).length === 2);
    expect(granted.afterMs).toBeLessThan(5_000);
    expect(servicesOf(granted.state).map((service) => service.id)).toEqual([first, second].sort());

    expect((await call('POST', `/identities/${carol.id}/disable`, { durationMinutes: 0 })).status).toBe(200);
    const disabled = await pushedWhere((state) => carolOf(state)?.disabled === true);
    expect(disabled.afterMs).toBeLessThan(5_000);

    expect((await call('POST', `/identities/${carol.id}/enable`)).status).toBe(200);
    const enabled = await pushedWhere((state) => carolOf(state)?.disabled === false);
    expect(enabled.afterMs).toBeLessThan(5_000);

    expect((await call('DELETE', `/service-policies/${dial}`)).status).toBe(200);
    const revoked = await pushedWhere((state) => servicesOf(state).length === 0);
    expect(revoked.afterMs).toBeLessThan(5_000);
    expect(revoked.state.events.some((event) => event.servicePolicy)).toBe(false);

    expect((await call('DELETE', `/identities/${carol.id}`)).status).toBe(200);
    const deleted = await pushedWhere((state) => carolOf(state) === undefined);
    expect(deleted.afterMs).toBeLessThan(5_000);

    // A new identity its policies let use the router.
    const dave = await user([t]);
    const joined = await pushedWhere((state) => identitiesOf(state).some((identity) => identity.id === dave.id));
    expect(joined.afterMs).toBeLessThan(5_000);
    end.socket.destroy();
  });

  it('drops a subscription whose body is malformed, logged, and keeps the channel open for the next one', async () => {
    const end = await connected();
    const linesBefore = controller().logLines.length;

    end.send({
      contentType: ContentType.subscribeToDataModelRequest,
      sequence: ++sequence,
      // Field 1 (the index) as a varint that never ends.
      body: Buffer.from([0x08, 0xff, 0xff, 0xff]),
    });
    subscribe(end, { subscriptionId: 'sub-after-bad' });
    const answer = await nextDataState(end);

    expect(answer.subscriptionId).toBe('sub-after-bad');
    const logged = controller()
      .logLines.slice(linesBefore)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    // Logged by the channel, as every malformed message of a handled type is (`ctrl-channel-logs.test.ts`).
    expect(logged).toContainEqual(
      expect.objectContaining({
        message: 'ctrl channel refused a malformed message',
        contentType: ContentType.subscribeToDataModelRequest,
        routerId: router.id,
      }),
    );
    expect(controller().ctrl.connected(router.id)?.channel.closeReason).toBeUndefined();
    end.socket.destroy();
  });
});
