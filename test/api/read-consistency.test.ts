import { describe, expect, it } from 'vitest';
import { readIntegrityStatusItem } from '#shared/store/integrity-items.ts';
import { keys } from '#shared/store/keys.ts';
import { readSystemItem } from '#shared/store/system-items.ts';
import { readItem } from '#shared/store/versioned-items.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { recordSent, type SentCommand } from '../support/dynamodb-recorder.ts';
import { integrityRun } from '../support/integrity.ts';

/**
 * Each read the store makes is strongly or eventually consistent as `shared/store/read-consistency.ts` says. DynamoDB
 * Local answers both alike, so these tests look at what the store sends: each read that must see the write before it
 * asks for a strongly consistent read (a test here fails if it were made eventual), and the reads of lists ask for
 * eventually consistent ones (half the read units).
 */

const { controller, call, createdId } = useAdminController();

type Sent = Pick<SentCommand, 'command' | 'input'>;

/** Every request the store sends while `run` runs, as the document client's own input. */
const sentDuring = (run: () => Promise<unknown>): Promise<Sent[]> => recordSent(controller().deps.store.db, run);

/** The partition a read names: a GetItem's key, a Query's `:pk` (or `:partition`), a batch's first key. */
function partitionOf({ command, input }: Sent): string {
  if (command === 'GetItemCommand') return String((input.Key as { PK: string }).PK);
  if (command === 'QueryCommand') {
    const values = input.ExpressionAttributeValues as Record<string, unknown>;
    return String(values[':pk'] ?? values[':partition'] ?? values[':type'] ?? '');
  }
  if (command === 'BatchGetItemCommand') {
    const [request] = Object.values(input.RequestItems as Record<string, { Keys: { PK: string }[] }>);
    return String(request?.Keys[0]?.PK ?? '');
  }
  return '';
}

/** Whether a read asked for a strongly consistent answer. */
function isStrong({ command, input }: Sent): boolean {
  if (command === 'BatchGetItemCommand') {
    return Object.values(input.RequestItems as Record<string, { ConsistentRead?: boolean }>).every(
      (request) => request.ConsistentRead === true,
    );
  }
  return input.ConsistentRead === true;
}

const READS = new Set(['GetItemCommand', 'QueryCommand', 'BatchGetItemCommand', 'ScanCommand']);

/** The reads of partitions matching `partition` among what was sent; at least one must have been. */
function readsOf(sent: readonly Sent[], partition: RegExp, command?: string): Sent[] {
  const found = sent.filter(
    (each) =>
      READS.has(each.command) &&
      (command === undefined || each.command === command) &&
      partition.test(partitionOf(each)),
  );
  expect(found.length, `a read of ${partition} among ${sent.map(partitionOf).join(', ')}`).toBeGreaterThan(0);
  return found;
}

const strong = (reads: readonly Sent[]) => expect(reads.map(isStrong)).toEqual(reads.map(() => true));
const eventual = (reads: readonly Sent[]) => expect(reads.map(isStrong)).toEqual(reads.map(() => false));

let n = 0;
const unique = (name: string) => `rc-${name}-${++n}`;

describe('strongly consistent reads, where a read must see the write before it', () => {
  it('an entity read before its update (its version conditions the write) and read back by id', async () => {
    const id = await createdId('/services', { name: unique('patched') });
    strong(readsOf(await sentDuring(() => call('PATCH', `/services/${id}`, { tags: { a: 'b' } })), /^services#/));
    strong(readsOf(await sentDuring(() => call('GET', `/services/${id}`)), /^services#/, 'GetItemCommand'));
  });

  it('a unique marker: a name just created is found by it', async () => {
    const name = unique('named');
    await createdId('/services', { name });
    const sent = await sentDuring(() => call('GET', `/services?filter=${encodeURIComponent(`name = "${name}"`)}`));
    strong(readsOf(sent, /^UNIQUE#services#name$/));
  });

  it('the links a delete checks, and the policies naming what it deletes', async () => {
    const id = await createdId('/services', { name: unique('deleted') });
    await createdId('/service-policies', {
      name: unique('naming'),
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#rc-people'],
      serviceRoles: [`@${id}`],
    });
    const sent = await sentDuring(() => call('DELETE', `/services/${id}`));
    strong(readsOf(sent, new RegExp(`^services#${id}$`), 'QueryCommand'));
    strong(readsOf(sent, new RegExp(`^SELECT#services#@${id}$`)));
  });

  it('the services using a config, which a change of the config fans out to', async () => {
    const type = await createdId('/config-types', { name: unique('type') });
    const config = await createdId('/configs', { name: unique('config'), configTypeId: type, data: { n: 1 } });
    await createdId('/services', { name: unique('configured'), configs: [config] });
    const sent = await sentDuring(() => call('PATCH', `/configs/${config}`, { data: { n: 2 } }));
    strong(readsOf(sent, new RegExp(`^configs#${config}$`), 'QueryCommand'));
  });

  it('whether a role attribute still has a holder, before its catalog entry is removed', async () => {
    const attribute = unique('attribute');
    const id = await createdId('/services', { name: unique('holder'), roleAttributes: [attribute] });
    const sent = await sentDuring(() => call('PATCH', `/services/${id}`, { roleAttributes: [] }));
    strong(readsOf(sent, new RegExp(`^ROLE#services#${attribute}$`)));
  });

  it('the policies and role members an access decision rests on', async () => {
    const attribute = unique('reach');
    const service = await createdId('/services', { name: unique('reached'), roleAttributes: [attribute] });
    const identity = await createdId('/identities', {
      name: unique('reacher'),
      type: 'User',
      isAdmin: false,
      roleAttributes: [attribute],
    });
    await createdId('/service-policies', {
      name: unique('reach-policy'),
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`#${attribute}`],
      serviceRoles: [`#${attribute}`],
    });
    const sent = await sentDuring(async () => {
      const response = await call('GET', `/identities/${identity}/services`);
      expect(response.body.data.map((each: { id: string }) => each.id)).toEqual([service]);
    });
    strong(readsOf(sent, /^SELECT#identities#/));
  });

  it("an API session: the caller's session and identity on every request, and a session read by its id", async () => {
    const mine = (await call('GET', '/current-api-session')).body.data.id as string;
    const sent = await sentDuring(() => call('GET', `/api-sessions/${mine}`));
    // The caller's token carries its identity and its authenticator: one batch of the identity, the authenticator (the
    // session ends with it) and the session.
    const batches = readsOf(sent, /^identities#/, 'BatchGetItemCommand');
    strong(batches);
    const batchKeys = batches.flatMap((batch) =>
      Object.values(batch.input.RequestItems as Record<string, { Keys: { PK: string }[] }>).flatMap((request) =>
        request.Keys.map((key) => key.PK),
      ),
    );
    expect(batchKeys).toEqual(expect.arrayContaining([expect.stringMatching(/^authenticators#/)]));
    strong(readsOf(sent, /^api-sessions#/, 'GetItemCommand'));
    strong(readsOf(sent, /^APISESSION#/, 'GetItemCommand'));
  });

  it('singletons, versioned items and the integrity lock, read before they are written', async () => {
    const { store } = controller().deps;
    strong(readsOf(await sentDuring(() => readSystemItem(store, 'network-ca')), /^SYSTEM#network-ca$/));
    strong(readsOf(await sentDuring(() => readItem(store, keys.postureData('none'))), /^POSTURE#none$/));
    strong(readsOf(await sentDuring(() => readIntegrityStatusItem(store)), /^INTEGRITY#status$/));
  });

  it('everything the integrity check reads: its scan, its point reads, the counters it reconciles', async () => {
    await createdId('/services', { name: unique('scanned'), roleAttributes: ['rc-scanned'] });
    const sent = await sentDuring(() => integrityRun(controller().deps, 'check', 2));
    const reads = sent.filter((each) => READS.has(each.command));
    expect(reads.map((each) => each.command)).toEqual(
      expect.arrayContaining(['ScanCommand', 'BatchGetItemCommand', 'QueryCommand']),
    );
    strong(reads);
    strong(readsOf(sent, /^COUNT#services$/));
  });
});

describe("the caller's read: eventually consistent for a request that changes nothing and needs no admin", () => {
  const C = '/edge/client/v1';
  const callerBatches = (sent: readonly Sent[]) =>
    sent.filter(
      (each) => each.command === 'BatchGetItemCommand' && /^(identities|APISESSION)#/.test(partitionOf(each)),
    );

  it("reads a client GET's caller eventually consistent, once", async () => {
    const token = await controller().login();
    const sent = await sentDuring(async () => {
      expect((await controller().call('GET', `${C}/current-api-session`, { token })).status).toBe(200);
    });
    const batches = callerBatches(sent);
    expect(batches).toHaveLength(1);
    eventual(batches);
  });

  it('reads again strongly what the eventual read would refuse: a token with no session (one a login just made), its session alone', async () => {
    const token = await controller().login();
    const unknown = `${token.split('.')[0]!.slice(0, -4)}0000.${token.split('.').slice(1).join('.')}`;
    const sent = await sentDuring(async () => {
      expect((await controller().call('GET', `${C}/current-api-session`, { token: unknown })).status).toBe(401);
    });
    const reads = sent.filter((each) => READS.has(each.command));
    expect(reads.map((each) => [each.command, isStrong(each)])).toEqual([
      ['BatchGetItemCommand', false],
      ['GetItemCommand', true],
    ]);
    expect(partitionOf(reads[1]!)).toMatch(/^APISESSION#/);
  });

  it('reads strongly the caller of a GET whose operation does not say it changes nothing (a GET may write)', async () => {
    const token = await controller().login();
    const sent = await sentDuring(async () => {
      expect((await controller().call('GET', `${C}/current-identity`, { token })).status).toBe(200);
    });
    strong(callerBatches(sent));
  });

  it("reads a write's and an admin request's caller strongly", async () => {
    const token = await controller().login();
    strong(callerBatches(await sentDuring(() => call('GET', '/services', undefined))));
    const write = await sentDuring(() => controller().call('DELETE', `${C}/current-api-session`, { token }));
    expect(callerBatches(write)).toHaveLength(1);
    strong(callerBatches(write));
  });
});

describe('eventually consistent reads, everywhere a list reads', () => {
  it('an unfiltered page: the id order, the total and the page entities', async () => {
    await createdId('/services', { name: unique('listed') });
    const sent = await sentDuring(() => call('GET', '/services?limit=5'));
    eventual(readsOf(sent, /^IDS#services$/));
    eventual(readsOf(sent, /^COUNT#services$/));
    eventual(readsOf(sent, /^services#/, 'BatchGetItemCommand'));
  });

  it('a filter that pins nothing: the filter records (one query for a small type), then the page entities', async () => {
    const name = unique('contained');
    await createdId('/services', { name });
    const sent = await sentDuring(async () => {
      const response = await call('GET', `/services?filter=${encodeURIComponent(`name contains "${name}"`)}`);
      expect(response.body.data).toHaveLength(1);
    });
    const ranges = readsOf(sent, /^IDS#services$/);
    expect(ranges.length).toBe(1);
    eventual(ranges);
    eventual(readsOf(sent, /^services#/, 'BatchGetItemCommand'));
  });

  it('a role filter and the role attributes in use', async () => {
    await createdId('/services', { name: unique('roled'), roleAttributes: ['rc-listed'] });
    eventual(
      readsOf(await sentDuring(() => call('GET', '/services?roleFilter=%23rc-listed')), /^ROLE#services#rc-listed$/),
    );
    eventual(readsOf(await sentDuring(() => call('GET', '/service-role-attributes')), /^ROLES#services$/));
  });
});
