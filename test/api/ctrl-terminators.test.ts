import { randomBytes, randomUUID } from 'node:crypto';
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_FEATURES } from '#ctrl-channel/control-features.ts';
import { ContentType, EdgeHeader, Header, replyForOf } from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerTerminators, terminatorsFeature } from '#ctrl-channel/terminators.ts';
import { peerDataOf } from '#shared/entities/terminator.ts';
import { keys } from '#shared/store/keys.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { type Credentials, dialCtrl, enrolledEdgeRouter, type RouterEnd } from '../support/ctrl-router.ts';
import { type EdgeClient, edgeNetwork } from '../support/edge-network.ts';
import { usableTerminators } from '../support/usable-terminators.ts';

// Short heartbeats, so a router that goes away is seen offline within the test (a closed socket at once; one that
// stops answering within 3 s, so that a loaded machine's pauses close none); a short grace for re-sent terminators.
const TIMINGS = { heartbeatIntervalMs: 100, unresponsiveTimeoutMs: 3_000, replyTimeoutMs: 300 };
const RECONFIRM_GRACE_MS = 1_500;
const { controller, call } = useAdminController(
  {},
  {
    ctrlTimings: TIMINGS,
    ctrlFeatures: CONTROL_FEATURES.map((feature) =>
      feature === routerTerminators ? terminatorsFeature({ reconfirmGraceMs: RECONFIRM_GRACE_MS }) : feature,
    ),
  },
);

type Router = { id: string; credentials: Credentials };
type Network = Awaited<ReturnType<typeof edgeNetwork>>;

let router: Router;
let network: Network;

beforeAll(async () => {
  router = await enrolledEdgeRouter(controller, call, 'terminators-router');
  network = await edgeNetwork(controller, call, router.id);
});

/** A router connected and its hello accepted, answering heartbeats as a live router does. */
async function connect(which: Router): Promise<RouterEnd> {
  const end = await dialCtrl(controller(), which.credentials, { answerHeartbeats: true });
  const answer = await end.hello(which.id);
  expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
  return end;
}

let nextSequence = 1;

/** Sends a message and waits for the controller's reply to it, past whatever else the controller sends meanwhile. */
async function ask(end: RouterEnd, contentType: number, body: Buffer) {
  const sequence = nextSequence++;
  end.send({ contentType, sequence, body });
  for (;;) {
    const message = await end.next();
    if (replyForOf(message) === sequence) return message;
  }
}

interface CreateResponse {
  terminatorId: string;
  result: string;
  msg: string;
  errorCode: number;
  retryHint: number;
}

/** What the router sends for a hosting SDK's Bind (20216): the SDK's Bind session and API session, its public key. */
async function createRequest(host: EdgeClient, fields: Record<string, unknown> = {}) {
  return {
    address: randomUUID(),
    sessionToken: (await host.session('Bind')).token,
    apiSessionToken: host.apiSessionToken,
    fingerprints: [],
    peerData: { 1003: randomBytes(32) },
    cost: 0,
    precedence: 'Default',
    ...fields,
  };
}

async function create(end: RouterEnd, request: object | Buffer): Promise<CreateResponse> {
  const body = Buffer.isBuffer(request) ? request : encodeBody('edge.CreateTerminatorV2Request', request);
  const answer = await ask(end, ContentType.createTerminatorV2Request, body);
  expect(answer.contentType).toBe(ContentType.createTerminatorV2Response);
  return decodeBody<CreateResponse>('edge.CreateTerminatorV2Response', answer.body);
}

async function update(end: RouterEnd, request: object) {
  return ask(end, ContentType.edgeUpdateTerminatorRequest, encodeBody('edge.UpdateTerminatorRequest', request));
}

/** Polls until `check` holds (what another endpoint's write or a timer does is seen eventually). */
async function eventually(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not so within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const usableIds = async (serviceId: string) =>
  (await usableTerminators(controller().deps, serviceId)).map((terminator) => terminator.id);

describe("a router's terminators (a hosting SDK binds through it)", () => {
  it('creates the terminator a Bind asks for: shown by both APIs as the reference shows it, usable by circuits', async () => {
    const end = await connect(router);
    const request = await createRequest(network.host, { cost: 7, precedence: 'Required', instanceId: 'web-1' });

    const response = await create(end, request);

    expect(response).toMatchObject({ terminatorId: request.address, result: 'Success', errorCode: 0 });
    const listed = await call('GET', `/terminators?filter=${encodeURIComponent(`service = "${network.serviceId}"`)}`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(1);
    const shown = listed.body.data[0];
    expect(shown).toMatchObject({
      id: request.address,
      serviceId: network.serviceId,
      routerId: router.id,
      router: { id: router.id, name: 'terminators-router' },
      binding: 'edge',
      address: request.address,
      // The reference shows the SDK's instance id (its addressable name) as the terminator's identity.
      identity: 'web-1',
      cost: 7,
      precedence: 'required',
    });
    // What the router's Bind keeps for circuits is not shown, as the reference shows it nowhere.
    for (const hidden of ['hostId', 'peerData', 'connectionId', 'identitySecret'])
      expect(shown).not.toHaveProperty(hidden);
    const client = await controller().call('GET', `/edge/client/v1/services/${network.serviceId}/terminators`, {
      token: network.host.apiSessionToken,
    });
    expect(client.status).toBe(200);
    expect(client.body.data).toEqual([
      expect.objectContaining({ id: request.address, routerId: router.id, identity: 'web-1' }),
    ]);
    const [usable] = await usableTerminators(controller().deps, network.serviceId);
    expect(usable).toMatchObject({ id: request.address, hostId: network.host.identityId });
    expect(peerDataOf(usable!).get(1003)).toEqual(request.peerData[1003]);
    end.socket.destroy();
  });

  it("refuses what the SDK's sessions do not allow, with the code and retry hint the router acts on", async () => {
    const end = await connect(router);
    const elsewhere = await enrolledEdgeRouter(controller, call, 'terminators-outsider');
    const outsider = await connect(elsewhere);
    const bind = await createRequest(network.host);
    const [header, payload, signature] = bind.sessionToken.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const forged = [
      header,
      Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 3600 })).toString('base64url'),
      signature,
    ];
    // The precedence enum has three values: a fourth is written by hand (field 6, varint 7).
    const unknownPrecedence = Buffer.concat([
      encodeBody('edge.CreateTerminatorV2Request', { ...bind, precedence: 'Default' }),
      Buffer.from([0x30, 0x07]),
    ]);
    const dial = {
      ...bind,
      sessionToken: (await network.dialer.session('Dial')).token,
      apiSessionToken: network.dialer.apiSessionToken,
    };
    const cases: [string, () => Promise<CreateResponse>, number, number][] = [
      ['a Dial session', () => create(end, dial), 4, 2],
      ['a router outside the policies', () => create(outsider, bind), 5, 2],
      ['an unknown API session', () => create(end, { ...bind, apiSessionToken: randomUUID() }), 2, 2],
      ['a token this controller did not sign', () => create(end, { ...bind, sessionToken: forged.join('.') }), 3, 2],
      ['a cost past 65535', () => create(end, { ...bind, cost: 65_536 }), 10, 3],
      ['an unknown precedence', () => create(end, unknownPrecedence), 9, 3],
      ['a blank address', () => create(end, { ...bind, address: '' }), 8, 3],
    ];

    for (const [what, answered, errorCode, retryHint] of cases) {
      const response = await answered();
      expect({ what, ...response }).toMatchObject({ what, result: 'FailedOther', errorCode, retryHint });
      expect(response.msg).not.toBe('');
    }
    expect((await call('GET', `/terminators/${bind.address}`)).status).toBe(404);
    end.socket.destroy();
    outsider.socket.destroy();
  });

  it('takes a re-sent create as the same terminator (cost and precedence updated), and refuses an id of another', async () => {
    const end = await connect(router);
    const request = await createRequest(network.host);
    expect((await create(end, request)).result).toBe('Success');

    const again = await create(end, { ...request, cost: 5, precedence: 'Failed' });

    expect(again).toMatchObject({ terminatorId: request.address, result: 'Success' });
    const shown = await call('GET', `/terminators/${request.address}`);
    expect(shown.body.data).toMatchObject({ cost: 5, precedence: 'failed' });
    const other = await edgeNetwork(controller, call, router.id);
    const conflict = await create(end, await createRequest(other.host, { address: request.address }));
    expect(conflict).toMatchObject({ result: 'FailedOther', errorCode: 1, retryHint: 3 });
    expect((await call('GET', `/terminators/${request.address}`)).body.data.serviceId).toBe(network.serviceId);
    end.socket.destroy();
  });

  it("refuses a terminator id the router does not own alike whoever owns it (an update as an unknown id's), naming none", async () => {
    const end = await connect(router);
    const ours = await createRequest(network.host);
    expect((await create(end, ours)).result).toBe('Success');
    // A second router, in this network's policies too (so its sessions for the service pass), hosting a service of its
    // own; and a second service on the first router.
    const stranger = await enrolledEdgeRouter(controller, call, 'terminators-stranger');
    const strangerNetwork = await edgeNetwork(controller, call, stranger.id);
    const attributes = (await call('GET', `/edge-routers/${stranger.id}`)).body.data.roleAttributes as string[];
    await call('PATCH', `/edge-routers/${stranger.id}`, { roleAttributes: [...attributes, `${network.tag}-er`] });
    const sideNetwork = await edgeNetwork(controller, call, router.id);
    const other = await connect(stranger);
    const taken = { address: ours.address };

    const creates = [
      await create(other, await createRequest(network.host, taken)),
      await create(other, await createRequest(strangerNetwork.host, taken)),
      await create(end, await createRequest(sideNetwork.host, taken)),
    ];
    const updateOf = async (end: RouterEnd, host: EdgeClient, terminatorId: string) => {
      const answer = await update(end, {
        sessionToken: (await host.session('Bind')).token,
        apiSessionToken: host.apiSessionToken,
        terminatorId,
        cost: 60_000,
        updateCost: true,
      });
      return {
        contentType: answer.contentType,
        errorCode: answer.headers.get(EdgeHeader.errorCode)?.readUInt32LE(0),
        text: answer.body.toString(),
      };
    };
    const unknownUpdate = await updateOf(other, network.host, randomUUID());
    const updates = [
      await updateOf(other, network.host, ours.address),
      await updateOf(other, strangerNetwork.host, ours.address),
      await updateOf(end, sideNetwork.host, ours.address),
    ];
    const removal = async (terminatorId: string) =>
      (
        await ask(
          other,
          ContentType.removeTerminatorsRequest,
          encodeBody('ctrl.RemoveTerminatorsRequest', { terminatorIds: [terminatorId] }),
        )
      ).headers.get(Header.resultSuccess);

    for (const refused of creates) {
      expect(refused).toEqual(creates[0]);
      expect(refused).toMatchObject({ result: 'FailedOther', errorCode: 1, retryHint: 3 });
    }
    for (const refused of updates) expect(refused).toEqual(unknownUpdate);
    expect(unknownUpdate).toMatchObject({ contentType: ContentType.error, errorCode: 8 });
    for (const text of [creates[0]!.msg, unknownUpdate.text]) {
      expect(text).not.toMatch(/service|router|identity|binding/i);
      const services = [network, strangerNetwork, sideNetwork].map(({ serviceId }) => serviceId);
      for (const named of [router.id, stranger.id, ...services, 'terminators-', 'edge-svc-']) {
        expect(text).not.toContain(named);
      }
    }
    expect(await removal(ours.address)).toEqual(await removal(randomUUID()));
    expect((await call('GET', `/terminators/${ours.address}`)).body.data).toMatchObject({
      serviceId: network.serviceId,
      routerId: router.id,
      cost: 0,
    });
    end.socket.destroy();
    other.socket.destroy();
  });

  it('removes the terminators a router names (1038), its own only; unknown ids are no failure', async () => {
    const end = await connect(router);
    const elsewhere = await enrolledEdgeRouter(controller, call, 'terminators-remover');
    const otherNetwork = await edgeNetwork(controller, call, elsewhere.id);
    const other = await connect(elsewhere);
    const ours = await createRequest(network.host);
    const theirs = await createRequest(otherNetwork.host);
    expect((await create(end, ours)).result).toBe('Success');
    expect((await create(other, theirs)).result).toBe('Success');

    const answer = await ask(
      end,
      ContentType.removeTerminatorsRequest,
      encodeBody('ctrl.RemoveTerminatorsRequest', { terminatorIds: [ours.address, theirs.address, randomUUID()] }),
    );

    expect(answer.contentType).toBe(ContentType.result);
    expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
    expect((await call('GET', `/terminators/${ours.address}`)).status).toBe(404);
    expect((await call('GET', `/terminators/${theirs.address}`)).status).toBe(200);
    end.socket.destroy();
    other.socket.destroy();
  });

  it("removes a router's batch all or nothing: a failed transaction leaves every terminator, the retry removes all at once", async () => {
    const bind = await createRequest(network.host);
    const requests = [1, 2, 3, 4].map(() => ({ ...bind, address: randomUUID() }));
    const end = await connect(router);
    for (const request of requests) expect((await create(end, request)).result).toBe('Success');
    const ids = requests.map((request) => request.address);
    const remove = () =>
      ask(
        end,
        ContentType.removeTerminatorsRequest,
        encodeBody('ctrl.RemoveTerminatorsRequest', { terminatorIds: ids }),
      );
    const { db } = controller().deps.store;
    const last = keys.entity('terminators', ids.at(-1)!);
    let failing = true;
    let transactions = 0;
    // DynamoDB failing the write that deletes the batch's last terminator (throttled, say), until told otherwise.
    db.middlewareStack.add(
      (next, context) => async (args) => {
        // The document client's input (keys as plain values), under its underlying command's name.
        if (context.commandName !== 'TransactWriteItemsCommand') return next(args);
        const items = (args.input as TransactWriteCommandInput).TransactItems ?? [];
        if (!items.some(({ Delete }) => Delete?.Key?.PK === last.PK && Delete.Key.SK === last.SK)) return next(args);
        transactions++;
        if (failing) throw new Error('injected: the transaction failed');
        return next(args);
      },
      { step: 'initialize', name: 'failTerminatorDeletes' },
    );
    try {
      const refused = await remove();

      expect(refused.headers.get(Header.resultSuccess)).toEqual(Buffer.from([0]));
      for (const id of ids) expect((await call('GET', `/terminators/${id}`)).status).toBe(200);

      failing = false;
      transactions = 0;
      const removed = await remove();

      expect(removed.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
      for (const id of ids) expect((await call('GET', `/terminators/${id}`)).status).toBe(404);
      // The four deletes went in one transaction.
      expect(transactions).toBe(1);
    } finally {
      db.middlewareStack.remove('failTerminatorDeletes');
      end.socket.destroy();
    }
  });

  it('refuses undecoded a removal past 64 KiB (the router sends 50 ids), and the channel goes on', async () => {
    const bind = await createRequest(network.host);
    const end = await connect(router);
    expect((await create(end, bind)).result).toBe('Success');
    // 2,000 ids of 36 characters: 76 KB, a body protobuf would otherwise decode on the endpoint's event loop.
    const oversize = [bind.address, ...Array.from({ length: 1_999 }, () => randomUUID())];
    const body = encodeBody('ctrl.RemoveTerminatorsRequest', { terminatorIds: oversize });
    expect(body.length).toBeGreaterThan(64 * 1024);

    const refused = await ask(end, ContentType.removeTerminatorsRequest, body);

    expect(refused.headers.get(Header.resultSuccess)).toEqual(Buffer.from([0]));
    expect((await call('GET', `/terminators/${bind.address}`)).status).toBe(200);
    const removed = await ask(
      end,
      ContentType.removeTerminatorsRequest,
      encodeBody('ctrl.RemoveTerminatorsRequest', { terminatorIds: [bind.address] }),
    );
    expect(removed.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
    expect((await call('GET', `/terminators/${bind.address}`)).status).toBe(404);
    end.socket.destroy();
  });

  it("updates a terminator's cost and precedence as the update's flags say (20209), and refuses an unknown one", async () => {
    const end = await connect(router);
    const request = await createRequest(network.host, { cost: 3 });
    expect((await create(end, request)).result).toBe('Success');
    const credentials = { sessionToken: request.sessionToken, apiSessionToken: request.apiSessionToken };

    const precedenceOnly = await update(end, {
      ...credentials,
      terminatorId: request.address,
      cost: 40,
      precedence: 'Required',
      updatePrecedence: true,
    });
    const costOnly = await update(end, { ...credentials, terminatorId: request.address, cost: 9, updateCost: true });
    const unknown = await update(end, { ...credentials, terminatorId: randomUUID(), cost: 1, updateCost: true });

    expect(precedenceOnly.contentType).toBe(ContentType.edgeUpdateTerminatorResponse);
    expect(precedenceOnly.body.length).toBe(0);
    expect(costOnly.contentType).toBe(ContentType.edgeUpdateTerminatorResponse);
    expect((await call('GET', `/terminators/${request.address}`)).body.data).toMatchObject({
      cost: 9,
      precedence: 'required',
    });
    expect(unknown.contentType).toBe(ContentType.error);
    expect(unknown.headers.get(EdgeHeader.errorCode)?.readUInt32LE(0)).toBe(8);
    expect(unknown.body.toString()).toMatch(/not found/);
    end.socket.destroy();
  });

  it("stops choosing a disconnected router's terminators, and deletes those it does not re-send once back", async () => {
    const own = await enrolledEdgeRouter(controller, call, 'terminators-reconnecting');
    const hosted = await edgeNetwork(controller, call, own.id);
    const first = await connect(own);
    const kept = await createRequest(hosted.host, { cost: 2 });
    const dropped = await createRequest(hosted.host, { cost: 1 });
    const preferred = await createRequest(hosted.host, { cost: 9, precedence: 'Required' });
    for (const request of [kept, dropped, preferred]) expect((await create(first, request)).result).toBe('Success');
    // Precedence first, then cost.
    expect(await usableIds(hosted.serviceId)).toEqual([preferred.address, dropped.address, kept.address]);

    first.socket.destroy();

    await eventually(async () => (await usableIds(hosted.serviceId)).length === 0);
    // Still stored, as in the reference: a router that comes back re-sends what it still hosts.
    expect((await call('GET', `/terminators/${kept.address}`)).status).toBe(200);
    const second = await connect(own);
    expect((await create(second, kept)).result).toBe('Success');
    expect((await create(second, preferred)).result).toBe('Success');
    expect(await usableIds(hosted.serviceId)).toEqual([preferred.address, dropped.address, kept.address]);
    await eventually(async () => (await call('GET', `/terminators/${dropped.address}`)).status === 404);
    expect(await usableIds(hosted.serviceId)).toEqual([preferred.address, kept.address]);
    second.socket.destroy();
  });
});
