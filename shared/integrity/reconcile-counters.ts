import { API_SESSIONS_COLLECTION } from '../auth/api-session.ts';
import { ENTITY_DEFINITIONS } from '../entities/definitions.ts';
import { counterOp } from '../store/entity-store.ts';
import { partitionItems } from '../store/index-queries.ts';
import { keys } from '../store/keys.ts';
import { Findings } from './findings.ts';
import type { ReconcileCounters } from './integrity-types.ts';

/** Every counted type: the kit's entities and the API sessions. */
const COUNTED = [...ENTITY_DEFINITIONS.map((def) => def.collection), API_SESSIONS_COLLECTION];

/**
 * Each type's counter shards against the live entities the segments counted; a fix moves one shard by the difference
 * (an `ADD`, so writes counting meanwhile are kept; running it again finds nothing left to move).
 */
export const reconcileCounters: ReconcileCounters = async (deps, { mode, entityCounts }) => {
  const findings = new Findings();
  for (const collection of COUNTED) {
    const shards = await partitionItems(deps.store, keys.counter(collection, 0).PK, { read: 'counterReconcile' });
    const counted = shards.reduce((sum, shard) => sum + Number(shard.count ?? 0), 0);
    const actual = entityCounts[collection] ?? 0;
    if (counted === actual) continue;
    const description = `the ${collection} counter says ${counted}, but ${actual} exist`;
    if (mode === 'check') {
      findings.add(description, false);
      continue;
    }
    await deps.store.transact([counterOp(deps.store.tableName, collection, actual - counted)]);
    findings.add(description, true);
  }
  return findings.list;
};
