import { describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';
import { addressRefusal } from '#shared/ext-jwt/address-policy.ts';

/** Addresses by the range they are in, both ends of each range where it matters, and their IPv4-mapped forms. */
const NON_PUBLIC: Record<string, readonly string[]> = {
  loopback: ['127.0.0.1', '127.255.255.254', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1'],
  'link-local': [
    '169.254.169.254',
    '169.254.0.0',
    '169.254.255.255',
    'fe80::1',
    'febf:ffff::1',
    '::ffff:169.254.169.254',
  ],
  private: [
    '10.0.0.0',
    '10.255.255.255',
    '172.16.0.0',
    '172.31.255.255',
    '192.168.0.0',
    '192.168.255.255',
    'fc00::1',
    'fd00:ec2::254',
    'fdff:ffff::1',
    '::ffff:10.1.2.3',
    '::ffff:ac10:1',
    '::ffff:192.168.1.1',
  ],
  unspecified: ['0.0.0.0', '0.1.2.3', '::', '::ffff:0.0.0.0'],
};
const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '9.255.255.255',
  '11.0.0.0',
  '126.255.255.255',
  '128.0.0.0',
  '169.253.255.255',
  '169.255.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.167.255.255',
  '192.169.0.0',
  '1.0.0.0',
  '2606:4700:4700::1111',
  'fbff:ffff::1',
  '::ffff:8.8.8.8',
];

describe('addressRefusal without private addresses (Lambda)', () => {
  for (const [kind, addresses] of Object.entries(NON_PUBLIC)) {
    it(`refuses ${kind} addresses`, () => {
      for (const address of addresses) {
        expect(addressRefusal(address, false), address).toBe(`${address} is a ${kind} address`);
      }
    });
  }

  it('allows public addresses, next to the edges of the refused ranges', () => {
    for (const address of PUBLIC) expect(addressRefusal(address, false), address).toBeUndefined();
  });

  it('refuses what is not an IP address', () => {
    expect(addressRefusal('localhost', false)).toBe('localhost is not an IP address');
    expect(addressRefusal('', false)).toBe(' is not an IP address');
  });
});

describe('addressRefusal with private addresses allowed (local runs)', () => {
  it('allows every address, loopback included', () => {
    for (const address of [...Object.values(NON_PUBLIC).flat(), ...PUBLIC]) {
      expect(addressRefusal(address, true), address).toBeUndefined();
    }
  });
});

describe('JWKS_ALLOW_PRIVATE_IPS', () => {
  it('defaults to allowed locally and refused in Lambda, and the environment overrides either way', () => {
    expect(loadConfig({}).jwks.allowPrivateAddresses).toBe(true);
    expect(loadConfig({ AWS_LAMBDA_FUNCTION_NAME: 'fn' }).jwks.allowPrivateAddresses).toBe(false);
    expect(loadConfig({ JWKS_ALLOW_PRIVATE_IPS: 'false' }).jwks.allowPrivateAddresses).toBe(false);
    const lambda = { AWS_LAMBDA_FUNCTION_NAME: 'fn', JWKS_ALLOW_PRIVATE_IPS: 'true' };
    expect(loadConfig(lambda).jwks.allowPrivateAddresses).toBe(true);
  });

  it('refuses anything but true or false', () => {
    expect(() => loadConfig({ JWKS_ALLOW_PRIVATE_IPS: 'yes' })).toThrow(/must be true or false/);
  });
});
