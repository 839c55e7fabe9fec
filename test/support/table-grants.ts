import { AsyncLocalStorage } from 'node:async_hooks';
import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type TableUser, tableActionsOf, tableIndexesOf } from '../../cdk/operation-groups.ts';

/**
 * The tests hold every function to the DynamoDB actions its IAM role is granted on the table in AWS
 * (`tableActionsOf`, cdk/operation-groups.ts), and to its indexes where it is granted only some (`tableIndexesOf`):
 * DynamoDB Local authorizes nothing, so a command outside a function's grant would pass every test here and fail in
 * production with AccessDenied. Code runs as a function inside `asTableUser` (the local server wraps each group
 * handler's invocation, the test controller its bootstrap and integrity runs, a test the ended sessions' sweep); what
 * the client sends meanwhile is checked as IAM would, and refused the same way.
 */

/**
 * What a function sends to DynamoDB Local and never sends in AWS, by function. The database group's snapshot is a
 * whole-table Scan into a JSON Lines file locally (`exportTable`, functions/database/snapshot.ts, for
 * `snapshots.kind: 'file'`); in AWS it is an on-demand backup (`dynamodb:CreateBackup`, granted to that function on
 * its own in cdk/controller-integrity.ts), so its role rightly has no Scan.
 */
const LOCAL_ONLY_ACTIONS: Partial<Record<TableUser, readonly string[]>> = { database: ['dynamodb:Scan'] };

/** The actions `user` may send to the table in these tests: its grant in AWS, and its local-only path. */
function allowedActionsOf(user: TableUser): ReadonlySet<string> {
  return new Set([...tableActionsOf(user), ...(LOCAL_ONLY_ACTIONS[user] ?? [])]);
}

/** A transaction's item kind → the action IAM authorizes that item as (a transaction has no action of its own). */
const TRANSACT_WRITE_ACTIONS: Readonly<Record<string, string>> = {
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  Delete: 'dynamodb:DeleteItem',
  ConditionCheck: 'dynamodb:ConditionCheckItem',
};

/**
 * The IAM actions a DynamoDB command needs, by the client command's name (`GetItemCommand` → `dynamodb:GetItem`: the
 * API's operations and IAM's actions share their names), except transactions, which IAM authorizes item by item.
 */
export function iamActionsOf(commandName: string, input: Readonly<Record<string, unknown>>): string[] {
  const operation = commandName.replace(/Command$/, '');
  const items = (input.TransactItems ?? []) as readonly Record<string, unknown>[];
  if (operation === 'TransactGetItems') return ['dynamodb:GetItem'];
  if (operation === 'TransactWriteItems') {
    return [...new Set(items.flatMap((item) => Object.keys(item).map((kind) => TRANSACT_WRITE_ACTIONS[kind] ?? kind)))];
  }
  return [`dynamodb:${operation}`];
}

const tableUser = new AsyncLocalStorage<TableUser>();

/** Runs `run` as the function `user`: the table commands it sends, and whatever it starts, are held to its grant. */
export function asTableUser<T>(user: TableUser, run: () => Promise<T>): Promise<T> {
  return tableUser.run(user, run);
}

/** The function the running code is, or undefined outside every function (a test arranging the table itself). */
export function currentTableUser(): TableUser | undefined {
  return tableUser.getStore();
}

/**
 * A command IAM would have refused: which function sent it, and the action its role lacks, or (`index`) the index its
 * role is not granted that action on.
 */
export interface TableRefusal {
  readonly user: TableUser;
  readonly action: string;
  readonly command: string;
  readonly index?: string;
}

/** What IAM answers a role without the action: AccessDeniedException, a client fault, never retried. */
function accessDenied(refusal: TableRefusal, tableName: unknown): DynamoDBServiceException {
  const resource = `table ${String(tableName)}${refusal.index === undefined ? '' : `/index/${refusal.index}`}`;
  const grant = refusal.index === undefined ? 'tableActionsOf' : 'tableIndexesOf';
  return new DynamoDBServiceException({
    name: 'AccessDeniedException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message:
      `The ${refusal.user} function is not authorized to perform: ${refusal.action} on resource: ${resource} (its ` +
      `${refusal.command}): ${grant}('${refusal.user}') in cdk/operation-groups.ts does not grant it`,
  });
}

/** The index a command reads that `user`'s role is not granted (`tableIndexesOf`), if it reads one. */
function ungrantedIndexOf(user: TableUser, input: Readonly<Record<string, unknown>>): string | undefined {
  const granted = tableIndexesOf(user);
  const index = input.IndexName;
  return typeof index === 'string' && granted !== undefined && !granted.includes(index) ? index : undefined;
}

/**
 * Holds what `db` sends to the grants: a command sent as a function that needs an action outside its grant, or that
 * reads an index its grant does not name, is refused with AccessDenied before it reaches DynamoDB Local, and
 * remembered in the answer (code that swallows the error, such as a best-effort touch, must still fail the test: the
 * test controller's `close` checks it).
 */
export function holdToTableGrants(db: DynamoDBDocumentClient): readonly TableRefusal[] {
  const refusals: TableRefusal[] = [];
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const user = currentTableUser();
      if (user === undefined) return next(args);
      const input = args.input as Record<string, unknown>;
      const command = String(context.commandName);
      const allowed = allowedActionsOf(user);
      const actions = iamActionsOf(command, input);
      const missing = actions.find((action) => !allowed.has(action));
      const index = ungrantedIndexOf(user, input);
      if (missing === undefined && index === undefined) return next(args);
      const refusal: TableRefusal =
        missing === undefined
          ? { user, action: actions[0]!, command, index: index! }
          : { user, action: missing, command };
      refusals.push(refusal);
      throw accessDenied(refusal, input.TableName);
    },
    { step: 'initialize', name: 'testTableGrants' },
  );
  return refusals;
}
