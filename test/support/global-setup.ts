import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '#local/dynamodb-local.ts';
import { ensureSpecDir } from '../contract/pinned-spec.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    /** The process id of that DynamoDB Local's JVM. */
    dynamoPid: number;
  }
}

/**
 * Once per run: the OpenZiti API documents the contract tests read (downloaded into the cache when no copy is on
 * this machine), and one in-memory DynamoDB Local; each test file creates its own table in it.
 */
export default async function setup(project: TestProject) {
  // Without the documents the run stops here, once, with the one-line instruction (the variable to set, the download
  // it tried): hundreds of tests read them, and each failing alike would bury it.
  await ensureSpecDir();
  const dynamo = await startDynamoDbLocal();
  project.provide('dynamoEndpoint', dynamo.endpoint);
  project.provide('dynamoPid', dynamo.pid);
  return async () => {
    await dynamo.stop();
  };
}
