import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { basename, dirname } from 'node:path';
import { dynamoDbLocalJar } from '#local/dynamodb-local.ts';

/** What the figures were measured on, as Markdown list items. */
export function machineFacts(): string[] {
  const cores = cpus();
  const load = loadavg().map((value) => value.toFixed(2));
  return [
    `- Node ${process.version} (${process.platform}/${process.arch}), ${type()} ${release()}`,
    `- CPU: ${cores[0]?.model.trim() ?? 'unknown'}, ${cores.length} cores; ${Math.round(totalmem() / 2 ** 30)} GiB RAM`,
    `- load average at start: ${load.join(', ')} (1, 5, 15 min): whatever else runs here shows in the latencies`,
    `- DynamoDB Local: ${basename(dirname(dynamoDbLocalJar().jar))}, in memory, on loopback`,
  ];
}
