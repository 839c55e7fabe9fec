import { describe, expect, it } from 'vitest';
import { ENTITY_DEFINITIONS } from '#shared/entities/definitions.ts';
import { referenceValues } from '#shared/store/derived-items.ts';
import { filterRecords } from '#shared/store/filter-records.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { authPolicyBody } from '../support/management-fixtures.ts';

const { controller, call, createdId, createPolicy } = useAdminController();
/** Rounds per pair: hundreds of interleavings in all, each a create or update racing a delete. */
const ROUNDS = 60;
let sequence = 0;
const unique = (prefix: string) => `${prefix}-${++sequence}`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs two requests at once, one of them after a random short delay, so rounds cover both orders and overlaps. */
async function interleave<A, B>(first: () => Promise<A>, second: () => Promise<B>): Promise<[A, B]> {
  const delay = Math.random() * 12;
  const [a, b] = await Promise.all([
    Math.random() < 0.5 ? pause(delay).then(first) : first(),
    Math.random() < 0.5 ? pause(delay).then(second) : second(),
  ]);
  return [a, b];
}

/**
 * Every id held by a reference of any stored entity of any declared type that names no existing entity. Read from the
 * table with the lists' own readers (the type's filter records, then its documents), not from what the requests
 * answered.
 */
async function danglingReferences(): Promise<string[]> {
  const held: { from: string; collection: string; target: string }[] = [];
  for (const def of ENTITY_DEFINITIONS) {
    const { store } = controller().deps;
    const ids = (await filterRecords(store, def.collection)).map((record) => String(record.id));
    for (const doc of await store.getMany(def, ids)) {
      for (const reference of def.references ?? []) {
        for (const target of referenceValues(doc, reference)) {
          held.push({
            from: `${def.collection}/${doc.id}.${reference.field}`,
            collection: reference.collection,
            target,
          });
        }
      }
    }
  }
  const dangling: string[] = [];
  for (const targetDef of ENTITY_DEFINITIONS) {
    const wanted = held.filter((link) => link.collection === targetDef.collection);
    const found = new Set(
      (
        await controller().deps.store.getMany(
          targetDef,
          wanted.map((link) => link.target),
        )
      ).map((doc) => doc.id),
    );
    for (const link of wanted)
      if (!found.has(link.target)) dangling.push(`${link.from} -> ${link.collection}/${link.target}`);
  }
  return dangling;
}

// Each race test runs its rounds one after another; on a busy two-core machine that takes longer than one request.
describe('links stay whole when a delete races a write', { timeout: 180_000 }, () => {
  it('identity created with an auth policy while the policy is deleted', async () => {
    const outcomes = new Set<string>();
    for (let round = 0; round < ROUNDS; round++) {
      const policyId = await createPolicy(authPolicyBody(unique('racing-policy')));
      const [created, deleted] = await interleave(
        () =>
          call('POST', '/identities', { name: unique('racer'), type: 'User', isAdmin: false, authPolicyId: policyId }),
        () => call('DELETE', `/auth-policies/${policyId}`),
      );
      outcomes.add(`${created.status}/${deleted.status}`);
      expect([201, 400]).toContain(created.status);
      expect([200, 409, 429]).toContain(deleted.status);
    }
    expect(await danglingReferences()).toEqual([]);
    // Both orders happened: some identities won (the delete was refused), some deletes won.
    expect(outcomes.has('201/409')).toBe(true);
    expect(outcomes.has('400/200')).toBe(true);
  });

  it('identity moved to an auth policy while the policy is deleted', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const policyId = await createPolicy(authPolicyBody(unique('moving-policy')));
      const identityId = await createdId('/identities', { name: unique('mover'), type: 'User', isAdmin: false });
      const [patched, deleted] = await interleave(
        () => call('PATCH', `/identities/${identityId}`, { authPolicyId: policyId }),
        () => call('DELETE', `/auth-policies/${policyId}`),
      );
      expect([200, 400]).toContain(patched.status);
      expect([200, 409]).toContain(deleted.status);
    }
    expect(await danglingReferences()).toEqual([]);
  });

  it('authenticator created while its identity is deleted', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const identityId = await createdId('/identities', { name: unique('parent'), type: 'User', isAdmin: false });
      const username = unique('orphan-candidate');
      const [created, deleted] = await interleave(
        () => call('POST', '/authenticators', { identityId, method: 'updb', username, password: 'race-Passw0rd!' }),
        () => call('DELETE', `/identities/${identityId}`),
      );
      expect([201, 400]).toContain(created.status);
      expect(deleted.status).toBe(200);
      // No orphan holds the username: another identity can take it.
      const other = await createdId('/identities', { name: unique('heir'), type: 'User', isAdmin: false });
      const reused = await call('POST', '/authenticators', {
        identityId: other,
        method: 'updb',
        username,
        password: 'race-Passw0rd!',
      });
      expect(reused.status).toBe(201);
    }
    expect(await danglingReferences()).toEqual([]);
  });

  it('an entity whose delete was refused takes new links again at once', async () => {
    const policyId = await createPolicy(authPolicyBody(unique('still-usable')));
    await createdId('/identities', { name: unique('pinned'), type: 'User', isAdmin: false, authPolicyId: policyId });

    const refused = await call('DELETE', `/auth-policies/${policyId}`);
    const next = await call('POST', '/identities', {
      name: unique('after-refusal'),
      type: 'User',
      isAdmin: false,
      authPolicyId: policyId,
    });

    expect(refused.status).toBe(409);
    expect(next.status).toBe(201);
  });
});
