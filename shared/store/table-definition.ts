/**
 * The one DynamoDB table's key schema, shared by the CDK stack, the local table bootstrap and the store.
 *
 * - Base table: `PK` / `SK` (entities are `<type>#<id>` / `META`; unique-value markers, links and children use
 *   their own `SK` prefixes).
 * - `GSI1` lists one entity type in its default order: `GSI1PK = TYPE#<type>`, `GSI1SK = <sort value>#<id>`.
 * - `GSI2` finds the children of a parent (authenticators and enrollments of an identity):
 *   `GSI2PK = <parentType>#<parentId>`, `GSI2SK = <childType>#<childId>`; an identity's API sessions have their own
 *   partition, `identities#<id>#api-sessions`.
 * - `expiresAtEpoch` is the TTL attribute (seconds); DynamoDB deletes lazily, so readers still check expiry.
 */
export const TABLE_KEYS = {
  partitionKey: 'PK',
  sortKey: 'SK',
  ttlAttribute: 'expiresAtEpoch',
  indexes: [
    { name: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK' },
    { name: 'GSI2', partitionKey: 'GSI2PK', sortKey: 'GSI2SK' },
  ],
} as const;
