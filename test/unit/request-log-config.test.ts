import { describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';

describe('the request log settings', () => {
  it('write every line under a second unless told, and read the rate and threshold from the environment', () => {
    expect(loadConfig({}).requestLog).toEqual({ sampleRate: 1, slowMs: 1000 });
    expect(loadConfig({ REQUEST_LOG_SAMPLE_RATE: '100', REQUEST_LOG_SLOW_MS: '250' }).requestLog).toEqual({
      sampleRate: 100,
      slowMs: 250,
    });
  });

  it('refuse a rate below one in one, or a threshold that is not a whole number of milliseconds', () => {
    for (const rate of ['0', '-1', '0.01', 'often']) {
      expect(() => loadConfig({ REQUEST_LOG_SAMPLE_RATE: rate }), rate).toThrow(/REQUEST_LOG_SAMPLE_RATE/);
    }
    for (const slow of ['-1', '1.5', 'soon']) {
      expect(() => loadConfig({ REQUEST_LOG_SLOW_MS: slow }), slow).toThrow(/REQUEST_LOG_SLOW_MS/);
    }
  });
});
