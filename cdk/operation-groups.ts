import type { OperationGroup, Route } from '#shared/routes/route.ts';

/** The operation groups `routes` use, in order of first appearance: one Lambda function each. */
export function operationGroupsOf(routes: readonly Route[]): OperationGroup[] {
  return [...new Set(routes.map((route) => route.group))];
}

/**
 * The source of every function the stack deploys: one per operation group of the route table, the bootstrap, the
 * integrity scan's and the ended sessions' sweep (what the construct package ships built, and what the bundle budget
 * and the bench measure).
 */
export function functionSources(routes: readonly Route[]): string[] {
  return [...operationGroupsOf(routes), 'bootstrap', 'integrity', 'session-sweep'];
}

/** A construct id for a group's function: `edge-routers` → `EdgeRoutersFunction`. */
export function functionIdOf(group: OperationGroup): string {
  const words = group.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  return `${words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('')}Function`;
}

/**
 * What uses the table: a function per operation group, the bootstrap, the integrity scan, the ended sessions' sweep,
 * and the routers' endpoint tasks.
 */
export type TableUser = OperationGroup | 'bootstrap' | 'integrity' | 'session-sweep' | 'router-endpoint';

/**
 * What the store's reads need: `GetCommand`, `BatchGetCommand` and `QueryCommand` (shared/store/), on the table and
 * its indexes.
 */
export const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'] as const;

/**
 * What the store's writes need: `PutCommand`, `UpdateCommand`, `DeleteCommand`, and `TransactWriteCommand`, which IAM
 * authorizes item by item as the put, update, delete or condition check each item is.
 */
export const TABLE_WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:ConditionCheckItem',
] as const;

/**
 * What only the integrity scan sends: the parallel `Scan` of the whole table (`segmentPages`) and the
 * `BatchWriteCommand` of its findings (`putSegmentFindings`). Snapshots in AWS are DynamoDB backups
 * (`dynamodb:CreateBackup`, granted to the database group on its own), not scans: only the local export scans.
 */
export const TABLE_SCAN_ACTIONS = ['dynamodb:Scan', 'dynamodb:BatchWriteItem'] as const;

/**
 * The DynamoDB actions each function is granted on the table, from what its operations send (shared/store/):
 *
 * | function | reads | writes | scan, batch write |
 * | --- | --- | --- | --- |
 * | every operation group | yes | yes | no |
 * | bootstrap | yes | yes | no |
 * | integrity | yes | yes (repairs) | yes |
 * | session-sweep | yes (GSI2 its only index) | yes (removals, its mark) | no |
 * | router-endpoint (ECS tasks) | yes | yes (router connections and their leases) | no |
 *
 * No operation group reads only: every authenticated operation moves its API session's last activity (an
 * `UpdateItem`), logins count their attempts (`UpdateItem` `ADD`), and even `info` serves the admin's controller
 * settings (create, update, delete). Not even `poll`, whose requests change nothing of the network: its poll refreshes
 * the session near its expiry, its refresh every minute of use, and any of its requests that finds its session ended
 * (its identity disabled, its authenticator deleted) removes it (a transaction: the session's items deleted, the
 * session counter updated, the routers' notice put), as does its logout. What least privilege takes from the groups is the whole-table `Scan` (one call
 * reads every credential hash and seed the table holds) and `BatchWriteItem` (unconditional writes of 25 items), and
 * DynamoDB's streams and table description, which nothing calls.
 *
 * The API tests hold every function to this list (test/support/table-grants.ts): a command outside it is refused
 * there with AccessDenied, as IAM refuses it here.
 */
export function tableActionsOf(user: TableUser): readonly string[] {
  return [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS, ...(user === 'integrity' ? TABLE_SCAN_ACTIONS : [])];
}

/**
 * The indexes a function is granted by name, where it queries fewer than all of them; undefined: every index
 * (`<table>/index/*`). The ended sessions' sweep queries only GSI2 (an identity's sessions, `removeEndedSessions`,
 * and the Dial sessions of each API session it removes); the rest it reads is the table's own (its mark, the routers'
 * change log, the sessions read again). Its writes need every write action (a Dial session's removal may check that
 * an identity is still missing, `ConditionCheckItem`), so its grant is narrowed by index rather than by action.
 */
export function tableIndexesOf(user: TableUser): readonly string[] | undefined {
  return user === 'session-sweep' ? ['GSI2'] : undefined;
}
