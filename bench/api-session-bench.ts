import { createApiSessionOps } from '#shared/auth/api-session-store.ts';
import { mapBounded } from '#shared/map-bounded.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { count, orderedIds } from '#shared/store/index-queries.ts';
import type { BenchClient } from './bench-client.ts';
import { type BenchControllerOptions, startBenchController } from './bench-controller.ts';
import { expectStatus, login } from './identity-scenarios.ts';
import { type MeasureOptions, measureOperation, type OperationFigures } from './measure-operation.ts';
import { SEED_CONCURRENCY, seedIdentities, seedIndexes } from './seed-identities.ts';

/** The stored sessions the list page is measured at: its cost must not follow them. */
export const SESSION_COUNTS = [10, 5_000] as const;
/** Tries of each kind of failed login, alternating. */
export const LOGIN_TRIES = 40;
const LOGIN_WARM_UP = 5;
const LIST_WARM_UP_MS = 5_000;
/** Seeded identities the sessions are spread over, with the admin. */
export const SESSION_OWNERS = 50;
const LIST_PATH = '/edge/management/v1/api-sessions?limit=10';
const LOGIN_PATH = '/edge/management/v1/authenticate?method=password';

export interface SessionBenchOptions extends BenchControllerOptions {
  readonly measure: MeasureOptions;
  readonly progress: (message: string) => void;
}

export interface SessionListFigures {
  readonly storedSessions: number;
  readonly totalCount: number;
  readonly figures: OperationFigures;
}

export interface LoginTimingFigures {
  readonly knownUserWrongPasswordMs: readonly number[];
  readonly unknownUserMs: readonly number[];
}

/** Stores sessions straight through the store (the writes a login commits), spread over `owners`. */
async function seedSessions(deps: Deps, owners: readonly string[], from: number, to: number): Promise<void> {
  await mapBounded(seedIndexes(from, to), SEED_CONCURRENCY, async (index) => {
    const { ops } = await createApiSessionOps(deps, {
      identityId: owners[index % owners.length]!,
      authenticatorId: 'bench-seeded',
      endsWithAuthenticator: false,
      ipAddress: '127.0.0.1',
      openedOn: 'client',
      configTypes: ['ziti-tunneler-client.v1', 'intercept.v1'],
      totpPending: false,
      extJwtPending: false,
    });
    await deps.store.transact(ops);
  });
}

/** Failed logins, a known username with a wrong password and an unknown username in turn (the order alternating). */
async function loginTiming(client: BenchClient, adminUsername: string): Promise<LoginTimingFigures> {
  const known = { username: adminUsername, password: 'not-the-admin-password' };
  const unknown = { username: 'bench-no-such-user', password: 'not-the-admin-password' };
  const timed = async (body: typeof known, what: string) => {
    const started = performance.now();
    expectStatus(await client.call('POST', LOGIN_PATH, { body }), 401, what);
    return performance.now() - started;
  };
  const knownMs: number[] = [];
  const unknownMs: number[] = [];
  for (let round = 0; round < LOGIN_WARM_UP + LOGIN_TRIES; round++) {
    const knownFirst = round % 2 === 0;
    const first = await timed(knownFirst ? known : unknown, 'failed login');
    const second = await timed(knownFirst ? unknown : known, 'failed login');
    if (round < LOGIN_WARM_UP) continue;
    knownMs.push(knownFirst ? first : second);
    unknownMs.push(knownFirst ? second : first);
  }
  return { knownUserWrongPasswordMs: knownMs, unknownUserMs: unknownMs };
}

/**
 * On a table of its own (so the first count is really 10): the API-session list page at each of `SESSION_COUNTS`
 * stored sessions, then the timing of failed logins.
 */
export async function apiSessionBench(
  options: SessionBenchOptions,
): Promise<{ list: SessionListFigures[]; login: LoginTimingFigures }> {
  const bench = await startBenchController('bench-sessions', options);
  const { deps, meter, client } = bench;
  try {
    const token = await login(client, options.adminUsername, options.adminPassword);
    await seedIdentities(deps, 0, SESSION_OWNERS);
    const owners = await orderedIds(deps.store, 'identities', 'id', 'asc', 0, SESSION_OWNERS + 1);

    const list: SessionListFigures[] = [];
    for (const target of SESSION_COUNTS) {
      const stored = await count(deps.store, 'api-sessions');
      options.progress(`seeding ${(target - stored).toLocaleString('en-US')} API sessions (to ${target} in all)`);
      await seedSessions(deps, owners, stored, target);
      let totalCount = 0;
      const figures = await measureOperation(
        async () => {
          const response = expectStatus(await client.call('GET', LIST_PATH, { token }), 200, 'list API sessions');
          totalCount = (response.body as { meta: { pagination: { totalCount: number } } }).meta.pagination.totalCount;
        },
        meter,
        // A fresh table and server: a longer warm-up, the same at each count.
        { ...options.measure, warmUpMs: Math.max(options.measure.warmUpMs, LIST_WARM_UP_MS) },
      );
      list.push({ storedSessions: await count(deps.store, 'api-sessions'), totalCount, figures });
    }
    options.progress(`timing ${LOGIN_TRIES} failed logins of each kind`);
    return { list, login: await loginTiming(client, options.adminUsername) };
  } finally {
    await bench.close();
  }
}
