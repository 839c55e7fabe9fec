import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Which requests a fault refuses: by the client command's name (`QueryCommand`, …) and its input. */
export type RequestMatcher = (command: string, input: Readonly<Record<string, unknown>>) => boolean;

/** A fault on a client: the requests it refused so far; `stop` lets every later request through. */
export interface DynamoDbFault {
  readonly refused: number;
  stop(): void;
}

interface ActiveFault {
  readonly matches: RequestMatcher;
  left: number;
  refused: number;
}

const faults = new WeakMap<DynamoDBDocumentClient, Set<ActiveFault>>();

/** What DynamoDB answers a request beyond the table's throughput once the client's own retries are spent. */
function throttled(command: string): DynamoDBServiceException {
  return new DynamoDBServiceException({
    name: 'ProvisionedThroughputExceededException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message: `The level of configured provisioned throughput for the table was exceeded (a test's fault on ${command})`,
  });
}

/** The client's active faults, with the one middleware that applies them (added once per client). */
function faultsOf(db: DynamoDBDocumentClient): Set<ActiveFault> {
  const existing = faults.get(db);
  if (existing) return existing;
  const active = new Set<ActiveFault>();
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName);
      const input = args.input as Record<string, unknown>;
      for (const fault of active) {
        if (fault.left <= 0 || !fault.matches(command, input)) continue;
        fault.left -= 1;
        fault.refused += 1;
        throw throttled(command);
      }
      return next(args);
    },
    // Before the retry step: the request fails as one whose retries were all throttled too.
    { step: 'initialize', name: 'testDynamoDbFaults' },
  );
  faults.set(db, active);
  return active;
}

/**
 * Refuses the next `times` requests `db` sends that `matches` picks (every one until `stop` by default) with
 * DynamoDB's throttling error, as if the client's retries had all been throttled, without reaching the table.
 */
export function refuseRequests(db: DynamoDBDocumentClient, matches: RequestMatcher, times = Infinity): DynamoDbFault {
  const active = faultsOf(db);
  const fault: ActiveFault = { matches, left: times, refused: 0 };
  active.add(fault);
  return {
    get refused() {
      return fault.refused;
    },
    stop: () => active.delete(fault),
  };
}

/** Names each hiding's middleware apart, so that its `stop` removes it alone. */
let hiders = 0;

/**
 * Leaves out of the answers to the requests `db` sends that `matches` picks the items `hides` picks, as an index that
 * has not caught up with a write yet would (until `stop`): the request reaches the table, its answer is cut.
 */
export function hideItems(
  db: DynamoDBDocumentClient,
  matches: RequestMatcher,
  hides: (item: Readonly<Record<string, unknown>>) => boolean,
): { readonly hidden: number; stop(): void } {
  let hidden = 0;
  let active = true;
  const name = `testDynamoDbHidden${++hiders}`;
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (!active || !matches(String(context.commandName), args.input as Record<string, unknown>)) return result;
      const output = result.output as { Items?: Record<string, unknown>[]; Count?: number };
      const items = output.Items ?? [];
      const kept = items.filter((item) => !hides(item));
      hidden += items.length - kept.length;
      output.Items = kept;
      output.Count = kept.length;
      return result;
    },
    // The answer as the caller reads it (unmarshalled), after the client's retries.
    { step: 'initialize', name },
  );
  return {
    get hidden() {
      return hidden;
    },
    stop() {
      active = false;
      db.middlewareStack.remove(name);
    },
  };
}
