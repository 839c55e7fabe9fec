import { DeleteCommand, paginateScan, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IntegrityMode } from '#shared/integrity/integrity-types.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { integrityRun } from '../support/integrity.ts';

const { controller, call } = useAdminController();

const run = (mode: IntegrityMode, segments: number) => integrityRun(controller().deps, mode, segments);

const ATTRIBUTES = ['red', 'green', 'blue'];
const attributes = fc.subarray(ATTRIBUTES);

/** What the API may do to the network: make, change and delete services, identities and service policies. */
const command = fc.oneof(
  fc.record({ kind: fc.constant('service' as const), roleAttributes: attributes }),
  fc.record({ kind: fc.constant('identity' as const), roleAttributes: attributes }),
  fc.record({ kind: fc.constant('policy' as const), attribute: fc.constantFrom(...ATTRIBUTES), named: fc.nat() }),
  fc.record({ kind: fc.constant('patch' as const), index: fc.nat(), roleAttributes: attributes }),
  fc.record({ kind: fc.constant('delete' as const), index: fc.nat() }),
);

/** The kinds of derived item a fault may hit (entity items themselves are the fault-injection tests' business). */
const DAMAGEABLE = /^(UNIQUE#|IDS#|ROLE#|ROLES#|SELECT#|COUNT#)|REFBY#/;

let made = 0;

describe('the integrity fix, over random networks and random faults', () => {
  it('repairs every fault so that the check is clean and every entity reads back as before', {
    timeout: 300_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { minLength: 4, maxLength: 14 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(1, 3),
        async (commands, faults, segments) => {
          const live: { path: string; id: string }[] = [];
          for (const step of commands) {
            const name = `rnd-${++made}`;
            if (step.kind === 'service' || step.kind === 'identity') {
              const path = step.kind === 'service' ? '/services' : '/identities';
              const body = step.kind === 'service' ? { name } : { name, type: 'User', isAdmin: false };
              const created = await call('POST', path, { ...body, roleAttributes: step.roleAttributes });
              expect(created.status, created.text).toBe(201);
              live.push({ path, id: created.body.data.id });
            } else if (step.kind === 'policy') {
              const services = live.filter((entry) => entry.path === '/services');
              const named = services.length > 0 ? [`@${services[step.named % services.length]!.id}`] : [];
              const created = await call('POST', '/service-policies', {
                name,
                type: 'Dial',
                semantic: 'AnyOf',
                identityRoles: [`#${step.attribute}`],
                serviceRoles: [`#${step.attribute}`, ...named],
              });
              expect(created.status, created.text).toBe(201);
              live.push({ path: '/service-policies', id: created.body.data.id });
            } else if (live.length > 0) {
              const target = live[step.index % live.length]!;
              if (step.kind === 'patch' && target.path !== '/service-policies') {
                const patched = await call('PATCH', `${target.path}/${target.id}`, {
                  roleAttributes: step.roleAttributes,
                });
                expect(patched.status, patched.text).toBe(200);
              } else if (step.kind === 'delete') {
                const deleted = await call('DELETE', `${target.path}/${target.id}`);
                if (deleted.status === 200) live.splice(live.indexOf(target), 1);
              }
            }
          }
          expect(await run('check', segments)).toEqual([]);
          const before = await Promise.all(
            live.map(async ({ path, id }) => (await call('GET', `${path}/${id}`)).body.data),
          );

          // Faults: derived items deleted, a pack record dropped, a counter skewed.
          const { db, tableName } = controller().deps.store;
          const candidates: Record<string, unknown>[] = [];
          for await (const page of paginateScan({ client: db }, { TableName: tableName })) {
            for (const item of page.Items ?? [])
              if (DAMAGEABLE.test(`${item.PK}#${item.SK}`) || DAMAGEABLE.test(String(item.SK))) candidates.push(item);
          }
          for (const fault of faults) {
            const item = candidates[fault % candidates.length]!;
            const Key = { PK: item.PK, SK: item.SK };
            if (String(item.PK).startsWith('COUNT#')) {
              await db.send(
                new UpdateCommand({
                  TableName: tableName,
                  Key,
                  UpdateExpression: 'ADD #c :d',
                  ExpressionAttributeNames: { '#c': 'count' },
                  ExpressionAttributeValues: { ':d': 1 + (fault % 5) },
                }),
              );
            } else if (String(item.PK).startsWith('IDS#') && fault % 2 === 1) {
              // A filter record out of step with its entity.
              await db.send(
                new UpdateCommand({
                  TableName: tableName,
                  Key,
                  UpdateExpression: 'SET #record = :record',
                  ExpressionAttributeNames: { '#record': 'record' },
                  ExpressionAttributeValues: { ':record': JSON.stringify({ id: item.SK, name: `damaged-${fault}` }) },
                }),
              );
            } else {
              await db.send(new DeleteCommand({ TableName: tableName, Key }));
            }
          }

          await run('fix', segments);
          expect(await run('check', segments)).toEqual([]);
          const after = await Promise.all(
            live.map(async ({ path, id }) => (await call('GET', `${path}/${id}`)).body.data),
          );
          expect(after).toEqual(before);
        },
      ),
      { numRuns: 6 },
    );
  });
});
