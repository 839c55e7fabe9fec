import type { Server } from 'node:https';
import type { Deps } from '#shared/ports/deps.ts';
import { type CapacityFigures, capacityBetween } from './capacity-tally.ts';
import { countDynamoDbRequests, type DynamoDbRequestCounter, requestsBetween } from './count-dynamodb-requests.ts';
import { countKmsCalls, type KmsCounter } from './count-kms-calls.ts';
import { createServerTimer, type ServerTimer, type ServerTimes } from './server-timer.ts';

/** Everything the bench counts at one moment. */
export interface MeterReading {
  readonly requests: ReadonlyMap<string, number>;
  readonly waves: number;
  readonly capacity: CapacityFigures;
  readonly writeUnitsByKind: ReadonlyMap<string, number>;
  readonly unpriced: ReadonlyMap<string, number>;
  readonly server: ServerTimes;
  readonly kms: number;
}

/** What happened between two readings: the same figures, each the difference. */
export type MeterDelta = MeterReading;

/**
 * One table's meters: its DynamoDB requests and units, the local server's requests (Lambda invocations) and their
 * times, and the KMS requests of its keys.
 */
export interface BenchMeter {
  readonly dynamo: DynamoDbRequestCounter;
  /** Attaches the request timer to the local server (once it is started). */
  timeServer(server: Server): void;
  /** The local server's `invokeAs`: times the CPU of each handler invocation (`ServerTimes.cpuMs`). */
  timeHandler<T>(group: unknown, invoke: () => Promise<T>): Promise<T>;
  read(): MeterReading;
  /** Runs a measured run's set-up without counting any of it. */
  uncounted<T>(work: () => Promise<T>): Promise<T>;
  /** Settles what waits on items not yet seen (see `DynamoDbRequestCounter.settle`); outside timed runs. */
  settle(): Promise<void>;
}

/** Meters on a bench table's deps; call before the deps serve requests (the KMS counter wraps their keys). */
export function createBenchMeter(deps: Deps): BenchMeter {
  const dynamo = countDynamoDbRequests(deps.store.db);
  const kms: KmsCounter = countKmsCalls(deps);
  const timer: ServerTimer = createServerTimer(() => dynamo.ownCpuMs());
  return {
    dynamo,
    timeServer: (server) => timer.attach(server),
    timeHandler: (_group, invoke) => timer.timeHandler(invoke),
    read: () => ({
      requests: dynamo.snapshot(),
      waves: dynamo.waves(),
      capacity: dynamo.capacity(),
      writeUnitsByKind: dynamo.writeUnitsByKind(),
      unpriced: dynamo.unpriced(),
      server: timer.snapshot(),
      kms: kms.count(),
    }),
    uncounted: (work) => dynamo.uncounted(() => kms.uncounted(() => timer.untimed(work))),
    settle: () => dynamo.settle(),
  };
}

/** What happened between two readings. */
export function readingBetween(before: MeterReading, after: MeterReading): MeterDelta {
  return {
    requests: requestsBetween(before.requests, after.requests),
    waves: after.waves - before.waves,
    capacity: capacityBetween(before.capacity, after.capacity),
    writeUnitsByKind: capacityBetween(
      { read: new Map(), write: before.writeUnitsByKind },
      { read: new Map(), write: after.writeUnitsByKind },
    ).write,
    unpriced: requestsBetween(before.unpriced, after.unpriced),
    server: {
      requests: after.server.requests - before.server.requests,
      billedMs: after.server.billedMs - before.server.billedMs,
      billedGbSeconds: after.server.billedGbSeconds - before.server.billedGbSeconds,
      ms: after.server.ms - before.server.ms,
      cpuMs: after.server.cpuMs - before.server.cpuMs,
    },
    kms: after.kms - before.kms,
  };
}
