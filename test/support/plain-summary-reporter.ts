import { availableParallelism } from 'node:os';
import type { Reporter, TestModule } from 'vitest/node';

/** What the whole suite may take on the 2-core CI machine. */
const BUDGET_MINUTES = 20;

/** `4 min 07 s`, `12.3 s`. */
export function formatDuration(seconds: number): string {
  if (seconds < 59.95) return `${seconds.toFixed(1)} s`;
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
}

/** The line before the counts: how long the run took on how many CPUs, against the suite's budget. */
export function durationLine(seconds: number, cpus: number): string {
  const verdict = seconds > BUDGET_MINUTES * 60 ? 'OVER the budget of' : 'budget';
  const processors = `${cpus} CPU${cpus === 1 ? '' : 's'}`;
  return `Duration: ${formatDuration(seconds)} wall clock on ${processors} (${verdict} ${BUDGET_MINUTES} min on the 2-core CI machine)`;
}

/**
 * Ends the run with how long it took (the vitest process's wall clock: start, DynamoDB Local, every test) and the
 * CPUs it had, then one plain line, `N passed, N failed, N skipped`, which CI reads (it does not parse vitest's own
 * coloured summary). The counts stay alone on the last line: CI takes that line only in exactly this form.
 */
export default class PlainSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const { state } = test.result();
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
    }
    const timing = durationLine(process.uptime(), availableParallelism());
    process.stdout.write(`\n${timing}\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
