import { AWS_PRICES } from './aws-prices.ts';

/**
 * What a request costs in Lambda at a memory size, modelled from what the bench measures in-process: its handler's CPU
 * time and its sequential DynamoDB waves.
 *
 * The model: Lambda gives a function CPU in proportion to its memory, one full vCPU at 1,769 MB; below that, CPU-bound
 * work stretches by `1769 / memory`. A request's duration is its CPU time so stretched (measured here on one core of
 * the bench machine, taken as one Lambda vCPU) plus the time it waits on DynamoDB, which memory does not change: one
 * in-region round trip per wave ({@link DYNAMODB_WAVE_MS}, an assumption: DynamoDB Local on loopback says nothing of
 * it). Lambda bills the duration rounded up to the millisecond, at the memory's share of a GB-second, plus the
 * request. Cold starts are left out (a fleet's steady traffic keeps instances warm; their init is billed apart).
 */

/** Memory at which a function has one full vCPU. */
export const FULL_VCPU_MB = 1_769;

/** The memory sizes the bench prices: the choice is made among them. */
export const MEMORY_SIZES_MB = [256, 512, 1_024] as const;

/** Assumed wait of one wave of DynamoDB requests from Lambda in the same region (GetItem/BatchGetItem p50 is a few ms). */
export const DYNAMODB_WAVE_MS = 4;

/** What the model needs of an operation: its CPU time per request and its DynamoDB waves. */
export interface CpuAndWaves {
  readonly cpuMsPerRequest: number;
  readonly wavesPerRequest: number;
}

/** The modelled duration of one request at `memoryMb`, before Lambda rounds it up. */
export function modelledMs(figures: CpuAndWaves, memoryMb: number): number {
  const stretch = Math.max(1, FULL_VCPU_MB / memoryMb);
  return figures.cpuMsPerRequest * stretch + figures.wavesPerRequest * DYNAMODB_WAVE_MS;
}

/** Lambda's dollars per million requests at `memoryMb` (arm64): the requests and the billed GB-seconds. */
export function lambdaPerMillion(figures: CpuAndWaves, memoryMb: number): number {
  const billedMs = Math.max(1, Math.ceil(modelledMs(figures, memoryMb)));
  const gbSeconds = (billedMs / 1000) * (memoryMb / 1024);
  return AWS_PRICES.lambda.requests + gbSeconds * AWS_PRICES.lambda.arm64GbSecond * 1_000_000;
}

/**
 * How slow a request may be modelled before a smaller memory is refused for it: the cheapest size wins only while its
 * requests stay under this (a password login's argon2id, ~45 ms of CPU, takes 310 ms at 256 MB).
 */
export const LATENCY_CAP_MS = 100;

/**
 * The memory a function should have for these operations, each weighted by its share of the function's requests:
 * the size that costs least, among those under which no operation's modelled duration passes {@link LATENCY_CAP_MS}
 * (the largest size when none qualifies).
 */
export function cheapestMemory(operations: readonly (CpuAndWaves & { readonly weight: number })[]): number {
  const fitting = MEMORY_SIZES_MB.filter((memory) =>
    operations.every((operation) => modelledMs(operation, memory) <= LATENCY_CAP_MS),
  );
  const candidates = fitting.length > 0 ? fitting : [MEMORY_SIZES_MB.at(-1)!];
  const costOf = (memory: number) =>
    operations.reduce((sum, operation) => sum + operation.weight * lambdaPerMillion(operation, memory), 0);
  return candidates.reduce((best, memory) => (costOf(memory) < costOf(best) ? memory : best));
}
