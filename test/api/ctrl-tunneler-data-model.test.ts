import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTER_FRAME_LIMITS } from '#ctrl-channel/frame-codec.ts';
import { type ChannelMessage, ContentType, Header } from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerDataModelFeature } from '#ctrl-channel/router-data-model.ts';
import { buildRouterDataState } from '#ctrl-channel/router-data-state.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { type Credentials, dialCtrl, enrolledEdgeRouter, type RouterEnd } from '../support/ctrl-router.ts';

// The data model alone, pushed again 300 ms after a change's first push (not the endpoint's 3 s).
const SETTLE_MS = 300;
const { controller, call, createdId } = useAdminController(
  {},
  { ctrlFeatures: [routerDataModelFeature({ settleMs: SETTLE_MS })] },
);

interface DecodedEvent {
  action: string;
  publicKey?: object;
  identity?: { id: string; name: string; serviceConfigs: Record<string, { configs: Record<string, string> }> };
  service?: { id: string; name: string; encryptionRequired: boolean; configs: string[] };
  servicePolicy?: { id: string; name: string; policyType: string };
  servicePolicyChange?: { policyId: string; relatedEntityIds: string[]; relatedEntityType: string; add: boolean };
  postureCheck?: { id: string; name: string; typeId: string; mac?: { macAddresses: string[] } };
  configType?: { id: string; name: string };
  config?: { id: string; typeId: string; name: string; dataJson: string };
}
interface DecodedDataState {
  events: DecodedEvent[];
  endIndex: number;
  timelineId: string;
}

let counter = 0;
const unique = (name: string) => `${name}-${++counter}-${Date.now().toString(36)}`;
const tag = unique('tun');

type Router = { id: string; credentials: Credentials };
let tunneler: Router;

async function configTypeId(name: string): Promise<string> {
  const found = await call('GET', `/config-types?filter=${encodeURIComponent(`name = "${name}"`)}`);
  return found.body.data[0].id as string;
}

const service = (name: string, roleAttributes: string[], configs: string[] = []) =>
  createdId('/services', { name: unique(name), roleAttributes, configs, encryptionRequired: true });
const policy = (body: Record<string, unknown>) =>
  createdId('/service-policies', { name: unique('tun-sp'), semantic: 'AnyOf', postureCheckRoles: [], ...body });

beforeAll(async () => {
  tunneler = await enrolledEdgeRouter(controller, call, unique('tun-er'), { isTunnelerEnabled: true });
});

async function connected(which: Router): Promise<RouterEnd> {
  const end = await dialCtrl(controller(), which.credentials, { answerHeartbeats: true });
  await end.hello(which.id);
  return end;
}

let sequence = 100;
function subscribe(end: RouterEnd, subscriptionId: string): void {
  end.send({
    contentType: ContentType.subscribeToDataModelRequest,
    sequence: ++sequence,
    body: encodeBody('edge.SubscribeToDataModelRequest', { subscriptionDurationSeconds: 300, subscriptionId }),
  });
}

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

/** The next DataState whose events pass `check`, skipping earlier ones (pushes that came before the change settled). */
async function dataStateWhere(end: RouterEnd, check: (state: DecodedDataState) => boolean, timeoutMs = 8_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await nextDataState(end, Math.max(1, deadline - Date.now()));
    if (check(answer.state)) return answer;
  }
}

/** What kind of model each event carries, in order. */
const kindOf = (event: DecodedEvent) =>
  Object.keys(event).find((key) => key !== 'action' && key !== 'isSynthetic' && event[key as keyof DecodedEvent]);
const servicesOf = (state: DecodedDataState) => state.events.flatMap((event) => event.service ?? []);
const policiesOf = (state: DecodedDataState) => state.events.flatMap((event) => event.servicePolicy ?? []);

describe("a tunneling router's data model: what its own identity is granted", () => {
  it('holds the services its identity may bind or dial, their policies, configs by type, posture checks and its overrides, in the order the router applies them; a router without a tunneler gets the policies of its identities and no configs', async () => {
    const [hostV1, interceptV1] = await Promise.all([configTypeId('host.v1'), configTypeId('intercept.v1')]);
    const hostData = { protocol: 'tcp', address: '127.0.0.1', port: 18463 };
    const hostConfig = await createdId('/configs', { name: unique('tun-host'), configTypeId: hostV1, data: hostData });
    const overrideConfig = await createdId('/configs', {
      name: unique('tun-host-override'),
      configTypeId: hostV1,
      data: { ...hostData, port: 18464 },
    });
    const interceptConfig = await createdId('/configs', {
      name: unique('tun-intercept'),
      configTypeId: interceptV1,
      data: { protocols: ['tcp'], addresses: ['echo.ziti'], portRanges: [{ low: 80, high: 80 }] },
    });
    const hosted = await service('tun-hosted', [`${tag}-hosted`], [hostConfig]);
    const intercepted = await service('tun-intercepted', [`${tag}-intercepted`], [interceptConfig]);
    const elsewhere = await service('tun-elsewhere', [`${tag}-elsewhere`]);
    const check = await createdId('/posture-checks', {
      name: unique('tun-mac'),
      typeId: 'MAC',
      macAddresses: ['aabbccddeeff'],
      roleAttributes: [`${tag}-check`],
    });
    // The router identity by its id, and by a role attribute it is given like any identity.
    expect((await call('PATCH', `/identities/${tunneler.id}`, { roleAttributes: [`${tag}-tunnelers`] })).status).toBe(
      200,
    );
    const bind = await policy({ type: 'Bind', identityRoles: [`@${tunneler.id}`], serviceRoles: [`#${tag}-hosted`] });
    const dial = await policy({
      type: 'Dial',
      identityRoles: [`#${tag}-tunnelers`],
      serviceRoles: [`#${tag}-intercepted`],
      postureCheckRoles: [`#${tag}-check`],
    });
    const others = await policy({
      type: 'Bind',
      identityRoles: [`#${tag}-others`],
      serviceRoles: [`#${tag}-elsewhere`],
    });
    const associated = await call('POST', `/identities/${tunneler.id}/service-configs`, [
      { serviceId: hosted, configId: overrideConfig },
    ]);
    expect(associated.status).toBe(200);
    const end = await connected(tunneler);

    subscribe(end, 'sub-tunneler');
    const { subscriptionId, state } = await nextDataState(end);

    expect(subscriptionId).toBe('sub-tunneler');
    expect(servicesOf(state)).toEqual(
      expect.arrayContaining([
        { id: hosted, name: expect.any(String), encryptionRequired: true, configs: [hostConfig] },
        { id: intercepted, name: expect.any(String), encryptionRequired: true, configs: [interceptConfig] },
      ]),
    );
    expect(servicesOf(state).map((s) => s.id)).not.toContain(elsewhere);
    expect(policiesOf(state).map(({ id, policyType }) => ({ id, policyType }))).toEqual(
      expect.arrayContaining([
        { id: bind, policyType: 'BindPolicy' },
        { id: dial, policyType: 'DialPolicy' },
      ]),
    );
    expect(policiesOf(state).map((p) => p.id)).not.toContain(others);
    // Each policy with what it relates to: its services, its posture checks, and the router identity alone.
    const changes = (policyId: string) =>
      state.events.flatMap((event) =>
        event.servicePolicyChange?.policyId === policyId ? [event.servicePolicyChange] : [],
      );
    expect(changes(bind)).toEqual([
      { policyId: bind, relatedEntityIds: [hosted], relatedEntityType: 'RelatedService', add: true },
      { policyId: bind, relatedEntityIds: [], relatedEntityType: 'RelatedPostureCheck', add: true },
      { policyId: bind, relatedEntityIds: [tunneler.id], relatedEntityType: 'RelatedIdentity', add: true },
    ]);
    expect(changes(dial).map((change) => change.relatedEntityIds)).toEqual([[intercepted], [check], [tunneler.id]]);
    expect(state.events.flatMap((event) => event.postureCheck ?? [])).toEqual([
      { id: check, name: expect.any(String), typeId: 'MAC', mac: { macAddresses: ['aabbccddeeff'] } },
    ]);
    // Configs as the router keys them, by their type's name; the override's config too.
    const types = state.events.flatMap((event) => event.configType ?? []);
    expect(types).toEqual(
      expect.arrayContaining([
        { id: hostV1, name: 'host.v1' },
        { id: interceptV1, name: 'intercept.v1' },
      ]),
    );
    const sentConfigs = state.events.flatMap((event) => event.config ?? []);
    expect(sentConfigs.map((config) => config.id).sort()).toEqual([hostConfig, overrideConfig, interceptConfig].sort());
    expect(JSON.parse(sentConfigs.find((config) => config.id === hostConfig)!.dataJson)).toEqual(hostData);
    const [identity] = state.events.flatMap((event) => event.identity ?? []);
    expect(identity).toMatchObject({
      id: tunneler.id,
      serviceConfigs: { [hosted]: { configs: { [hostV1]: overrideConfig } } },
    });
    // The order a full state is applied in: what is named before what names it, each policy before its relations.
    const order = state.events.map(kindOf).filter((kind) => kind !== 'publicKey');
    const first = (kind: string) => order.indexOf(kind);
    const last = (kind: string) => order.lastIndexOf(kind);
    expect(last('configType')).toBeLessThan(first('config'));
    expect(last('config')).toBeLessThan(first('identity'));
    expect(last('identity')).toBeLessThan(first('service'));
    expect(last('service')).toBeLessThan(first('postureCheck'));
    expect(last('postureCheck')).toBeLessThan(first('servicePolicy'));
    expect(order.slice(first('servicePolicy'))).toEqual(
      policiesOf(state).flatMap(() => [
        'servicePolicy',
        'servicePolicyChange',
        'servicePolicyChange',
        'servicePolicyChange',
      ]),
    );
    end.socket.destroy();

    // A router without a tunneler gets the policies of the identities that may use it, and no configs.
    const plain = await enrolledEdgeRouter(controller, call, unique('tun-plain-er'));
    // A policy of every identity would grant a router identity, if this router had one.
    await createdId('/edge-router-policies', {
      name: unique('tun-erp'),
      semantic: 'AnyOf',
      identityRoles: [`#${tag}-users`],
      edgeRouterRoles: [`@${plain.id}`],
    });
    const user = await createdId('/identities', {
      name: unique('tun-user'),
      type: 'Device',
      isAdmin: false,
      roleAttributes: [`${tag}-users`],
    });
    const all = await service('tun-all', [`${tag}-all`], [hostConfig]);
    const everyone = await policy({ type: 'Bind', identityRoles: ['#all'], serviceRoles: [`#${tag}-all`] });
    const plainEnd = await connected(plain);

    subscribe(plainEnd, 'sub-plain');
    const { state: plainState } = await nextDataState(plainEnd);

    expect(plainState.events.flatMap((event) => event.identity ?? []).map((identity) => identity.id)).toEqual([user]);
    expect(servicesOf(plainState)).toEqual([
      { id: all, name: expect.any(String), encryptionRequired: true, configs: [] },
    ]);
    expect(policiesOf(plainState).map((p) => p.id)).toEqual([everyone]);
    expect(plainState.events.flatMap((event) => event.servicePolicyChange?.relatedEntityIds ?? [])).toEqual([
      all,
      user,
    ]);
    expect(plainState.events.some((event) => event.config ?? event.configType)).toBe(false);
    plainEnd.socket.destroy();
  });

  it("keeps the model within the message budget: a tunneler's part that does not fit is left out whole, the identities still sent", async () => {
    const asRouter = { id: tunneler.id, name: 'tunneler', kind: 'edge-router', fingerprint: '' } as const;
    const full = await buildRouterDataState(controller().deps, asRouter, ROUTER_FRAME_LIMITS.maxBodyBytes);
    expect(full.tunneler).toMatchObject({ omitted: false, servicePolicies: expect.any(Number) });
    expect(full.tunneler!.services).toBeGreaterThan(0);
    const keysOnly = full.events.filter((event) => 'publicKey' in event);
    const budget =
      encodeBody('edge.DataState', { events: keysOnly, endIndex: Date.now(), timelineId: 'x'.repeat(22) }).length + 400;

    const bounded = await buildRouterDataState(controller().deps, asRouter, budget);

    expect(bounded.tunneler).toMatchObject({ omitted: true });
    expect(bounded.events.every((event) => 'publicKey' in event || 'identity' in event)).toBe(true);
    expect(bounded.identityCount).toBeGreaterThan(0);
    expect(bounded.digest).not.toBe(full.digest);
  });

  it("keeps a tunneler's own grants when the policy part of its identities does not fit: each of its policies related to it alone", async () => {
    const router = await enrolledEdgeRouter(controller, call, unique('tun-fallback-er'), { isTunnelerEnabled: true });
    const t = unique('tun-fallback');
    await createdId('/edge-router-policies', {
      name: unique('tun-erp'),
      semantic: 'AnyOf',
      identityRoles: [`#${t}-users`],
      edgeRouterRoles: [`@${router.id}`],
    });
    const users = [];
    for (let i = 0; i < 3; i++) {
      users.push(
        await createdId('/identities', {
          name: unique('tun-fallback-user'),
          type: 'Device',
          isAdmin: false,
          roleAttributes: [`${t}-users`],
        }),
      );
    }
    const shared = await service('tun-fallback-shared', [`${t}-shared`]);
    const sdkOnly = await service('tun-fallback-sdk', [`${t}-sdk`]);
    const hostedByAll = await policy({
      type: 'Bind',
      identityRoles: [`@${router.id}`, `#${t}-users`],
      serviceRoles: [`#${t}-shared`],
    });
    const dialedByUsers = await policy({ type: 'Dial', identityRoles: [`#${t}-users`], serviceRoles: [`#${t}-sdk`] });
    const asRouter = { id: router.id, name: 'fallback', kind: 'edge-router', fingerprint: '' } as const;
    const full = await buildRouterDataState(controller().deps, asRouter, ROUTER_FRAME_LIMITS.maxBodyBytes);
    const relatedIdentities = (events: readonly object[], policyId: string) =>
      (events as DecodedEvent[]).flatMap((event) =>
        event.servicePolicyChange?.policyId === policyId &&
        event.servicePolicyChange.relatedEntityType === 'RelatedIdentity'
          ? event.servicePolicyChange.relatedEntityIds
          : [],
      );
    expect(full.policies).toMatchObject({ omitted: false, identities: 4 });
    expect(relatedIdentities(full.events, hostedByAll)).toEqual([router.id, ...users].sort());
    expect(relatedIdentities(full.events, dialedByUsers)).toEqual([...users].sort());
    const encoded = (events: readonly object[]) =>
      encodeBody('edge.DataState', { events, endIndex: Date.now(), timelineId: 'x'.repeat(22) }).length;
    // Just short of the whole (the build keeps 256 bytes for the state's own fields, which take some 35 here), with
    // room for all but the SDK identities' part of the policies.
    const budget = encoded(full.events) + 200;

    const bounded = await buildRouterDataState(controller().deps, asRouter, budget);

    expect(bounded.policies).toMatchObject({ omitted: true });
    expect(bounded.tunneler).toMatchObject({ omitted: false });
    expect(bounded).toMatchObject({ identityCount: 4, omittedIdentities: 0 });
    expect(relatedIdentities(bounded.events, hostedByAll)).toEqual([router.id]);
    expect(relatedIdentities(bounded.events, dialedByUsers)).toEqual([]);
    const sentServices = (bounded.events as DecodedEvent[]).flatMap((event) => event.service?.id ?? []);
    // Those its own policies grant (others' of this file's too, by `#all`), not the SDK identities' alone.
    expect(sentServices).toContain(shared);
    expect(sentServices).not.toContain(sdkOnly);
  });

  it('pushes a fresh full state under the subscription within seconds of a change to what its identity is granted, and nothing for a change that does not concern it', async () => {
    const router = await enrolledEdgeRouter(controller, call, unique('tun-push-er'), { isTunnelerEnabled: true });
    const pushTag = unique('tun-push');
    await policy({ type: 'Bind', identityRoles: [`@${router.id}`], serviceRoles: [`#${pushTag}`] });
    const end = await connected(router);
    subscribe(end, 'sub-push');
    const first = await nextDataState(end);

    // A service the router identity's Bind policy selects, created after the router subscribed.
    const added = await service('tun-pushed', [pushTag]);
    const pushed = await dataStateWhere(end, (state) => servicesOf(state).some((s) => s.id === added));

    expect(pushed.subscriptionId).toBe('sub-push');
    expect(pushed.state.endIndex).toBeGreaterThan(first.state.endIndex);
    // Another identity's service: the model built again is the same, so nothing is sent (the settled push neither).
    await service('tun-unrelated', [unique('tun-nobody')]);
    await expect(nextDataState(end, 2_500 + SETTLE_MS)).rejects.toThrow(/no message/);

    // The service renamed: pushed again.
    const renamed = unique('tun-renamed');
    expect((await call('PATCH', `/services/${added}`, { name: renamed })).status).toBe(200);
    await dataStateWhere(end, (state) => servicesOf(state).some((s) => s.name === renamed));
    end.socket.destroy();
  });

  it("follows tunneling turned on and off while the router is connected: its identity's grants come and go", async () => {
    const router = await enrolledEdgeRouter(controller, call, unique('tun-toggle-er'));
    const toggleTag = unique('tun-toggle');
    const toggled = await service('tun-toggle-svc', [toggleTag]);
    // The router identity does not exist yet (a policy may not name it by id), and has no role attribute when made.
    await policy({ type: 'Bind', identityRoles: ['#all'], serviceRoles: [`#${toggleTag}`] });
    const end = await connected(router);
    subscribe(end, 'sub-toggle');
    expect(servicesOf((await nextDataState(end)).state)).toEqual([]);

    expect((await call('PATCH', `/edge-routers/${router.id}`, { isTunnelerEnabled: true })).status).toBe(200);
    const on = await dataStateWhere(end, (state) => servicesOf(state).some((s) => s.id === toggled));
    expect(on.subscriptionId).toBe('sub-toggle');
    expect(on.state.events.flatMap((event) => event.identity ?? []).map((identity) => identity.id)).toContain(
      router.id,
    );

    expect((await call('PATCH', `/edge-routers/${router.id}`, { isTunnelerEnabled: false })).status).toBe(200);
    const off = await dataStateWhere(end, (state) => servicesOf(state).length === 0);
    expect(off.state.events.every((event) => event.publicKey ?? event.identity)).toBe(true);
    end.socket.destroy();
  });
});
