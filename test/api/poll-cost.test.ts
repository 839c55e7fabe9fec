import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, onTestFinished } from 'vitest';
import { NEAR_EXPIRY_TOUCH_MS } from '#shared/auth/api-session-store.ts';
import { SHARED_MARKER_LIFETIME_MS } from '../../functions/poll/shared-markers.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { dynamoDbReadUnits } from '../support/dynamodb-read-units.ts';
import { recordSent, type SentCommand } from '../support/dynamodb-recorder.ts';
import { dynamoDbTracker } from '../support/dynamodb-tracker.ts';
import { integrityRun } from '../support/integrity.ts';

/**
 * What an SDK's poll (`GET /current-api-session/service-updates`, once a minute per device: most of a fleet's
 * requests) costs, and how a polling device keeps its session: one eventually consistent read wave (the session and
 * the identity, whose item holds the caller's own change marker, in one batch; the markers it shares with other
 * identities once per `SHARED_MARKER_LIFETIME_MS` and instance), no write until the session nears its expiry.
 */
const TIMEOUT_MINUTES = 30;
const { controller, call, userUnder, relogin } = useAdminController({ apiSessionTimeoutMinutes: TIMEOUT_MINUTES });
const C = '/edge/client/v1';
const MINUTE = 60_000;

async function device(name: string, roleAttributes: string[]) {
  // The admin's session may have expired with the clock the tests before moved.
  await relogin();
  const user = await userUnder('default', name);
  await call('PATCH', `/identities/${user.identityId}`, { roleAttributes });
  const login = await controller().call('POST', `${C}/authenticate?method=password`, {
    body: { username: user.username, password: user.password },
  });
  expect(login.status, login.text).toBe(200);
  return { ...user, token: login.body.data.token as string };
}

const poll = (token: string) => controller().call('GET', `${C}/current-api-session/service-updates`, { token });

/** The requests one poll sends, with what it answered. */
async function sentByPoll(token: string): Promise<{ status: number; sent: SentCommand[] }> {
  let status = 0;
  const sent = await recordSent(controller().deps.store.db, async () => {
    status = (await poll(token)).status;
  });
  return { status, sent };
}

const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'TransactWriteItemsCommand']);

/** The partition keys a batch read names. */
function batchKeys(command: SentCommand): string[] {
  const requests = Object.values(command.input.RequestItems as Record<string, { Keys: { PK: string }[] }>);
  const pks = requests.flatMap((request) => request.Keys.map((key) => key.PK));
  return pks.map((pk) => (pk.startsWith('APISESSION#') ? 'APISESSION#' : pk)).sort();
}

/**
 * A device whose polls (after a first, which learns what its identity names) do not read its authenticator, and whose
 * session still ends with it: deleted through the API, the next poll answers 401.
 */
async function expectEndsWithUnreadAuthenticator(polling: { token: string; authenticatorId: string }) {
  expect((await poll(polling.token)).status).toBe(200);
  const { status, sent } = await sentByPoll(polling.token);
  expect(status).toBe(200);
  expect(sent.flatMap(batchKeys)).not.toContain(`authenticators#${polling.authenticatorId}`);
  expect((await call('DELETE', `/authenticators/${polling.authenticatorId}`)).status).toBe(200);
  expect((await poll(polling.token)).status).toBe(401);
}

/** What a poll sent once the markers it shares with others are no longer kept (a lifetime on, then polled once). */
async function sentByPollAfterLifetime(token: string) {
  controller().advanceClock(SHARED_MARKER_LIFETIME_MS);
  return sentByPoll(token);
}

describe('an SDK poll', () => {
  it('reads its session, its identity and its change markers in one eventually consistent batch', async () => {
    const polling = await device('poll-one-wave', ['poll-a', 'poll-b']);
    // The first poll of an identity this instance has not seen reads the markers of its attributes after its identity.
    expect((await poll(polling.token)).status).toBe(200);

    const { status, sent } = await sentByPollAfterLifetime(polling.token);
    expect(status).toBe(200);
    expect(sent.map((each) => each.command)).toEqual(['BatchGetItemCommand']);
    const [batch] = sent;
    expect(Object.values(batch!.input.RequestItems as Record<string, { ConsistentRead?: boolean }>)).toEqual([
      expect.objectContaining({ ConsistentRead: false }),
    ]);
    // The session, the identity (which holds its own marker), the global marker (`#all`'s too) and one per attribute:
    // no `#all` marker of its own, and not the authenticator that opened the session (the identity names it while it
    // lives).
    expect(batchKeys(batch!)).toEqual(
      [
        'APISESSION#',
        `identities#${polling.identityId}`,
        'CHANGED#service-access',
        'CHANGED#service-access:#poll-a',
        'CHANGED#service-access:#poll-b',
      ].sort(),
    );
    expect(await dynamoDbTracker(controller().deps.store.db).measure(() => poll(polling.token))).toEqual({
      waves: 1,
      requests: 1,
    });
  });

  it('reads the markers it shares with other identities once a lifetime, and answers their change after it', async () => {
    const polling = await device('poll-shared', ['poll-shared']);
    // The lifetime is the controller's clock's: held, a loaded machine's slow requests cannot run past it.
    const release = controller().holdClock();
    onTestFinished(release);
    controller().advanceClock(1); // the policy's change a millisecond after anything before the hold
    const before = (await poll(polling.token)).body.data.lastChangeAt as string;
    await call('POST', '/service-policies', {
      name: 'poll-shared-policy',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#poll-shared'],
      serviceRoles: ['#poll-shared-service'],
    });

    // Within the lifetime: its session and its identity only, which holds its own marker: two items, one read unit.
    const within = await sentByPoll(polling.token);
    expect(within.status).toBe(200);
    expect(within.sent.map(batchKeys)).toEqual([['APISESSION#', `identities#${polling.identityId}`]]);
    expect(await dynamoDbReadUnits(controller().deps.store.db).measure(() => poll(polling.token))).toEqual({
      readUnits: 1,
      keysRead: 2,
    });

    // A lifetime on, the shared markers are read again, and the policy's change is answered.
    const after = await sentByPollAfterLifetime(polling.token);
    expect(after.sent.map(batchKeys)).toEqual([
      [
        'APISESSION#',
        'CHANGED#service-access',
        'CHANGED#service-access:#poll-shared',
        `identities#${polling.identityId}`,
      ],
    ]);
    expect((await poll(polling.token)).body.data.lastChangeAt > before).toBe(true);
  });

  it('ends with its authenticator, which it does not read: the identity names it while it lives', async () => {
    await expectEndsWithUnreadAuthenticator(await device('poll-authenticator', []));
  });

  it('reads the authenticator of an identity stored before identities named theirs, until the integrity fix names it', async () => {
    const polling = await device('poll-older-identity', []);
    const { deps } = controller();
    // As an identity stored by an earlier version: no field naming its authenticators.
    await deps.store.db.send(
      new UpdateCommand({
        TableName: deps.store.tableName,
        Key: { PK: `identities#${polling.identityId}`, SK: 'META' },
        UpdateExpression: 'REMOVE updbAuthenticatorId, certAuthenticatorId',
      }),
    );
    const { status, sent } = await sentByPollAfterLifetime(polling.token);
    expect(status).toBe(200);
    expect(sent.flatMap(batchKeys)).toContain(`authenticators#${polling.authenticatorId}`);

    const findings = await integrityRun(deps, 'fix');
    expect(findings).toContainEqual(
      expect.objectContaining({
        description: expect.stringContaining(`is not named by identities ${polling.identityId} (updbAuthenticatorId)`),
        fixed: true,
      }),
    );
    // The poll after the fix learns that the identity names it; from then on it is not read.
    await expectEndsWithUnreadAuthenticator(polling);
  });

  it('ends with an authenticator deleted outside the API once the integrity fix stops its identity naming it', async () => {
    const polling = await device('poll-hand-deleted', []);
    const { deps } = controller();
    await deps.store.db.send(
      new DeleteCommand({
        TableName: deps.store.tableName,
        Key: { PK: `authenticators#${polling.authenticatorId}`, SK: 'META' },
      }),
    );

    const findings = await integrityRun(deps, 'fix');

    expect(findings).toContainEqual(
      expect.objectContaining({
        description: expect.stringContaining(
          `names authenticators ${polling.authenticatorId} (updbAuthenticatorId), which does not exist`,
        ),
        fixed: true,
      }),
    );
    expect((await poll(polling.token)).status).toBe(401);
  });

  it('reads the markers of attributes the identity gained since, after it, and answers their change', async () => {
    const polling = await device('poll-gains', ['poll-before']);
    const before = (await poll(polling.token)).body.data.lastChangeAt as string;
    await call('PATCH', `/identities/${polling.identityId}`, { roleAttributes: ['poll-before', 'poll-after'] });
    await call('POST', '/service-policies', {
      name: 'poll-gains-policy',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#poll-after'],
      serviceRoles: ['#poll-gains'],
    });
    const { status, sent } = await sentByPoll(polling.token);
    expect(status).toBe(200);
    expect(sent.map((each) => each.command)).toEqual(['BatchGetItemCommand', 'BatchGetItemCommand']);
    expect(batchKeys(sent[1]!)).toEqual(['CHANGED#service-access:#poll-after']);
    expect((await poll(polling.token)).body.data.lastChangeAt > before).toBe(true);
    expect((await sentByPoll(polling.token)).sent).toHaveLength(1);
  });

  it('writes nothing for a device polling once a minute until its session nears expiry', async () => {
    const polling = await device('poll-no-write', ['poll-quiet']);
    const writes: string[] = [];
    for (let minute = 1; minute < TIMEOUT_MINUTES - NEAR_EXPIRY_TOUCH_MS / MINUTE; minute++) {
      controller().advanceClock(MINUTE);
      const { status, sent } = await sentByPoll(polling.token);
      expect(status, `minute ${minute}`).toBe(200);
      writes.push(...sent.filter((each) => WRITES.has(each.command)).map((each) => `${minute}: ${each.command}`));
    }
    expect(writes).toEqual([]);
  });

  it('keeps the session of a device that only polls: its polls refresh it in the last minutes before expiry', async () => {
    const polling = await device('poll-only', []);
    let touches = 0;
    for (let minute = 1; minute <= 2 * TIMEOUT_MINUTES + 5; minute++) {
      controller().advanceClock(MINUTE);
      const { status, sent } = await sentByPoll(polling.token);
      expect(status, `minute ${minute}`).toBe(200);
      touches += sent.filter((each) => each.command === 'UpdateItemCommand').length;
    }
    // Two refreshes in 65 minutes (one per 28), not one a minute.
    expect(touches).toBe(2);
  });

  it("is kept alive by the SDK's own refresh (GET /current-api-session), which the poll never has to do", async () => {
    const polling = await device('poll-refreshed', []);
    let pollWrites = 0;
    for (let minute = 1; minute <= 2 * TIMEOUT_MINUTES; minute++) {
      controller().advanceClock(MINUTE);
      // The C SDK refreshes its session at 1/2 to 5/6 of its lifetime: here every 20 minutes.
      if (minute % 20 === 0) {
        expect((await controller().call('GET', `${C}/current-api-session`, { token: polling.token })).status).toBe(200);
      }
      const { status, sent } = await sentByPoll(polling.token);
      expect(status, `minute ${minute}`).toBe(200);
      pollWrites += sent.filter((each) => WRITES.has(each.command)).length;
    }
    expect(pollWrites).toBe(0);
  });

  it('ends with the session: a session idle past the timeout answers 401 to the poll', async () => {
    const polling = await device('poll-idle', []);
    controller().advanceClock(TIMEOUT_MINUTES * MINUTE + 1);
    expect((await poll(polling.token)).status).toBe(401);
  });
});
