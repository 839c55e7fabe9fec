import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // API tests each start their own DynamoDB Local table and HTTPS server; two cores, so keep the pool small.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', './test/support/plain-summary-reporter.ts'],
  },
});
