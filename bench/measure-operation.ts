import { type DynamoDbRequestCounter, requestsBetween } from './count-dynamodb-requests.ts';
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
}

/** Runs one operation sequentially and reports its latency percentiles and the DynamoDB requests each run made. */
export async function measureOperation(
  run: () => Promise<void>,
  counter: DynamoDbRequestCounter,
  options: MeasureOptions,
): Promise<OperationFigures> {
  const warming = performance.now();
  for (let i = 0; i < options.warmUp || performance.now() - warming < options.warmUpMs; i++) await run();
  const before = counter.snapshot();
  const wavesBefore = counter.waves();
  const samples: number[] = [];
  const started = performance.now();
  while (
    samples.length < options.minIterations ||
    (samples.length < options.maxIterations && performance.now() - started < options.budgetMs)
  ) {
    const t = performance.now();
    await run();
    samples.push(performance.now() - t);
  }
  const delta = requestsBetween(before, counter.snapshot());
  const requestsByOperation = new Map([...delta].map(([operation, count]) => [operation, count / samples.length]));
  const requestsPerOp = [...requestsByOperation.values()].reduce((sum, count) => sum + count, 0);
  return {
    iterations: samples.length,
    p50Ms: percentile(samples, 0.5),
    p95Ms: percentile(samples, 0.95),
    requestsPerOp,
    requestsByOperation,
    wavesPerOp: (counter.waves() - wavesBefore) / samples.length,
  };
}
