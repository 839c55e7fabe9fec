import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLE_BUDGET_BYTES, bundleFunction, functionNames } from '../bench/measure-bundles.ts';

/**
 * `node scripts/bundle-sizes.ts [function…]`: bundles the functions as the synth does and prints, for each, what a
 * cold start loads (bytes, gzip), the whole bundle with its lazily loaded chunks, and the largest packages of the
 * cold-start set, from esbuild's metafile. Exits 1 when one is over the budget.
 */
const outDir = await mkdtemp(join(tmpdir(), 'ziti-bundle-sizes-'));
let over = false;
try {
  const names = process.argv.length > 2 ? process.argv.slice(2) : functionNames();
  const sizes = await Promise.all(names.map((name) => bundleFunction(name, outDir)));
  for (const size of sizes) {
    over ||= size.bytes > BUNDLE_BUDGET_BYTES;
    const largest = size.largest.map(([name, bytes]) => `${name} ${(bytes / 1024).toFixed(0)}K`).join(', ');
    console.log(
      `${size.functionName.padEnd(15)} cold start ${String(size.bytes).padStart(8)} B (gzip ${size.gzipBytes}), ` +
        `all files ${size.totalBytes} B; largest: ${largest}`,
    );
  }
} finally {
  await rm(outDir, { recursive: true, force: true });
}
if (over) {
  console.error(`over the budget of ${BUNDLE_BUDGET_BYTES} bytes`);
  process.exitCode = 1;
}
