/**
 * The one DynamoDB table's key schema, shared by the CDK stack, the local table bootstrap and the store.
 *
 * - Base table: `PK` / `SK`; every item shape is built in `keys.ts` (entities, unique markers, id order, links,
 *   role index, counters, API sessions).
 * - `GSI1` holds the types read whole (`readWhole`: posture checks, config types), `GSI1PK = TYPE#<type>`,
 *   `GSI1SK = <id>`; no other document enters it (lists read filter records instead), so their writes pay for no copy
 *   here. For API sessions it holds their id pointers (which never change), so a session's touch writes nothing here.
 * - `GSI2` finds the children of a parent (authenticators and enrollments of an identity):
 *   `GSI2PK = <parentType>#<parentId>`, `GSI2SK = <childType>#<childId>`; an identity's API sessions have their own
 *   partition, `identities#<id>#api-sessions`.
 * - `GSI3` orders API sessions by last activity (`ACTIVITY#api-sessions#<shard>` / `<lastActivityAt>`, 16 shards by
 *   token hash), keys only: the expired ones are a key range of each shard, so they are counted and removed without
 *   reading the live ones, and no one partition takes every session's touch.
 * - `expiresAtEpoch` is the TTL attribute (seconds); DynamoDB deletes lazily, so readers still check expiry.
 */
export const TABLE_KEYS = {
  partitionKey: 'PK',
  sortKey: 'SK',
  ttlAttribute: 'expiresAtEpoch',
  indexes: [
    { name: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK', projection: 'ALL' },
    { name: 'GSI2', partitionKey: 'GSI2PK', sortKey: 'GSI2SK', projection: 'ALL' },
    { name: 'GSI3', partitionKey: 'GSI3PK', sortKey: 'GSI3SK', projection: 'KEYS_ONLY' },
  ],
} as const;
