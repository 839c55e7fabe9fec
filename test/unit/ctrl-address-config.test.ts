import { describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';

describe('the control channel address setting (CTRL_ADDRESS)', () => {
  it('is unset by default, and kept as given when it is a tls:<host>:<port> address', () => {
    expect(loadConfig({}).ctrlAddress).toBeUndefined();
    for (const address of ['tls:ctrl.example.com:443', 'tls:203.0.113.7:6262', 'tls:[2001:db8::7]:1280']) {
      expect(loadConfig({ CTRL_ADDRESS: address }).ctrlAddress).toBe(address);
    }
  });

  it('refuses what a router could not dial, naming the setting', () => {
    for (const address of [
      'ctrl.example.com:443',
      'https://ctrl.example.com:443',
      'tls:ctrl.example.com',
      'tls:ctrl.example.com:0',
      'tls:ctrl.example.com:70000',
      'tls::443',
      'tls:2001:db8::7:443',
    ]) {
      expect(() => loadConfig({ CTRL_ADDRESS: address }), address).toThrow(/CTRL_ADDRESS must be tls:<host>:<port>/);
    }
  });
});
