import { type BenchMeter, readingBetween } from './bench-meter.ts';
import { type CapacityFigures, capacityBetween, totalUnits } from './capacity-tally.ts';
import { percentile } from './percentile.ts';

export interface MeasureOptions {
  /** Unmeasured runs first (at least this many, for at least `warmUpMs`): JIT warm-up in Node and DynamoDB Local. */
  readonly warmUp: number;
  readonly warmUpMs: number;
  readonly maxIterations: number;
  /** Runs at least this many even past the time budget. */
  readonly minIterations: number;
  /** Stops adding iterations (past the minimum) once the measured runs took this long. */
  readonly budgetMs: number;
}

export interface OperationFigures {
  readonly iterations: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  /** Mean DynamoDB requests per run. */
  readonly requestsPerOp: number;
  /** Mean DynamoDB requests per run, by DynamoDB operation. */
  readonly requestsByOperation: ReadonlyMap<string, number>;
  /** Mean sequential waves of DynamoDB requests per run (see `DynamoDbRequestCounter.waves`). */
  readonly wavesPerOp: number;
  /** Mean read and write request units per run, by table and index (AWS's rules, `capacity-rules.ts`). */
  readonly capacityPerOp: CapacityFigures;
  readonly readUnitsPerOp: number;
  readonly writeUnitsPerOp: number;
  /** The table's write units per run by the kind of item written (`itemKindOf`: entity-or-link, idOrder, ...). */
  readonly writeUnitsByKind: ReadonlyMap<string, number>;
  /** Requests the server answered per run: Lambda invocations (and API Gateway requests) in AWS. */
  readonly invocationsPerOp: number;
  /**
   * Lambda's billed duration of a run: its requests' server times, each rounded up to the millisecond as Lambda bills
   * it, the median over the runs (a mean would carry whatever else this machine was doing at the time).
   */
  readonly billedMsPerOp: number;
  /** Mean of the same, for comparison. */
  readonly billedMsMean: number;
  /** The billed duration at each request's function memory, in GB-seconds, the median over the runs. */
  readonly billedGbSecondsPerOp: number;
  /** The server's CPU time of a run (`ServerTimes.cpuMs`), the median over the runs: what Lambda's memory stretches. */
  readonly cpuMsPerOp: number;
  /** KMS requests per run (`count-kms-calls.ts`). */
  readonly kmsPerOp: number;
  /** Requests per run that AWS reports no units for and the units leave out (cancelled transactions), by reason. */
  readonly unpricedPerOp: ReadonlyMap<string, number>;
}

/**
 * Runs one operation sequentially and reports its latency percentiles, the DynamoDB requests, waves and request units
 * each run made, the server time and KMS requests. `prepare`, when given, runs before each run uncounted and untimed
 * (what a run needs fresh, such as a service not dialled yet).
 */
export async function measureOperation(
  run: () => Promise<void>,
  meter: BenchMeter,
  options: MeasureOptions,
  prepare?: () => Promise<void>,
): Promise<OperationFigures> {
  const prepared = async () => {
    if (prepare) await meter.uncounted(prepare);
  };
  const warming = performance.now();
  for (let i = 0; i < options.warmUp || performance.now() - warming < options.warmUpMs; i++) {
    await prepared();
    await run();
  }
  await meter.uncounted(() => meter.settle());
  const before = meter.read();
  const samples: number[] = [];
  const billedSamples: number[] = [];
  const gbSecondSamples: number[] = [];
  const cpuSamples: number[] = [];
  const started = performance.now();
  while (
    samples.length < options.minIterations ||
    (samples.length < options.maxIterations && performance.now() - started < options.budgetMs)
  ) {
    await prepared();
    const { billedMs: billedBefore, billedGbSeconds: gbSecondsBefore, cpuMs: cpuBefore } = meter.read().server;
    const t = performance.now();
    await run();
    samples.push(performance.now() - t);
    const { billedMs: billedAfter, billedGbSeconds: gbSecondsAfter, cpuMs: cpuAfter } = meter.read().server;
    billedSamples.push(billedAfter - billedBefore);
    gbSecondSamples.push(gbSecondsAfter - gbSecondsBefore);
    cpuSamples.push(cpuAfter - cpuBefore);
  }
  await meter.settle();
  const delta = readingBetween(before, meter.read());
  const runs = samples.length;
  const requestsByOperation = new Map([...delta.requests].map(([operation, count]) => [operation, count / runs]));
  const capacityPerOp = capacityBetween({ read: new Map(), write: new Map() }, delta.capacity, runs);
  return {
    iterations: runs,
    p50Ms: percentile(samples, 0.5),
    p95Ms: percentile(samples, 0.95),
    requestsPerOp: [...requestsByOperation.values()].reduce((sum, count) => sum + count, 0),
    requestsByOperation,
    wavesPerOp: delta.waves / runs,
    capacityPerOp,
    readUnitsPerOp: totalUnits(capacityPerOp.read),
    writeUnitsPerOp: totalUnits(capacityPerOp.write),
    writeUnitsByKind: new Map([...delta.writeUnitsByKind].map(([kind, units]) => [kind, units / runs])),
    invocationsPerOp: delta.server.requests / runs,
    billedMsPerOp: percentile(billedSamples, 0.5),
    billedMsMean: delta.server.billedMs / runs,
    billedGbSecondsPerOp: percentile(gbSecondSamples, 0.5),
    cpuMsPerOp: percentile(cpuSamples, 0.5),
    kmsPerOp: delta.kms / runs,
    unpricedPerOp: new Map([...delta.unpriced].map(([reason, count]) => [reason, count / runs])),
  };
}
