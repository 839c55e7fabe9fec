import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLE_BUDGET_BYTES, bundleFunction, functionNames } from '../../bench/measure-bundles.ts';

/**
 * Issue 21's budget: what a cold start of any function reads of its bundle (`index.mjs` and the chunks it imports
 * statically; the AWS SDK is the runtime's) stays within 300 KB minified. A new static import of something heavy
 * fails here, naming the packages that weigh most; code only some operations need belongs behind `await import()`
 * (`loadedOnUse` for whole operation modules).
 */
describe('function bundles', () => {
  const outDir = mkdtempSync(join(tmpdir(), 'bundle-budget-'));
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  // esbuild bundles them all in a few seconds; a loaded two-core machine may take half a minute.
  it(`load at most ${BUNDLE_BUDGET_BYTES} bytes at a cold start`, { timeout: 180_000 }, async () => {
    const sizes = await Promise.all(functionNames().map((name) => bundleFunction(name, outDir)));

    const over = sizes
      .filter((size) => size.bytes > BUNDLE_BUDGET_BYTES)
      .map((size) => `${size.functionName}: ${size.bytes} B, largest ${JSON.stringify(size.largest)}`);
    expect(over).toEqual([]);
    // At a cold start a function imports only the SDK's DynamoDB clients from the runtime (the bootstrap, which calls
    // the others on every run, excepted): KMS, Secrets Manager, Step Functions and S3 load with their first call.
    for (const size of sizes.filter((size) => size.functionName !== 'bootstrap')) {
      expect(size.runtimeModules, size.functionName).toEqual(['@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb']);
    }
    // The SDK is left to the runtime and the tracer, X.509 and Ajv load lazily: none is in any cold-start set.
    for (const size of sizes) {
      const packages = size.largest.map(([name]) => name);
      expect(packages).not.toContain('@smithy/core');
      expect(packages).not.toContain('aws-xray-sdk-core');
    }
  });
});
