import { describe, expect, it } from 'vitest';
import { durationLine, formatDuration } from '../support/plain-summary-reporter.ts';

describe('the closing summary', () => {
  it('writes a duration in seconds under a minute, else in minutes and seconds', () => {
    expect(formatDuration(12.34)).toBe('12.3 s');
    expect(formatDuration(59.94)).toBe('59.9 s');
    expect(formatDuration(59.96)).toBe('1 min 00 s');
    expect(formatDuration(247.4)).toBe('4 min 07 s');
    expect(formatDuration(1260)).toBe('21 min 00 s');
  });

  it('names the wall clock, the CPUs and the 20-minute budget, and says when the run went over it', () => {
    expect(durationLine(247.4, 2)).toBe(
      'Duration: 4 min 07 s wall clock on 2 CPUs (budget 20 min on the 2-core CI machine)',
    );
    expect(durationLine(1260, 2)).toBe(
      'Duration: 21 min 00 s wall clock on 2 CPUs (OVER the budget of 20 min on the 2-core CI machine)',
    );
    expect(durationLine(30, 1)).toContain('on 1 CPU (');
  });
});
