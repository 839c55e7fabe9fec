import { describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';
import { addressRefusal } from '#shared/ext-jwt/address-policy.ts';

/**
 * Addresses by the kind of range they are in (as the refusal names it), both ends of each range where it matters,
 * and the IPv6 forms that carry an IPv4 address (mapped, translated, NAT64), judged by that address.
 */
const NON_PUBLIC: Record<string, readonly string[]> = {
  'a metadata address': [
    '169.254.169.254',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '::ffff:0:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::169.254.169.254',
    'fd00:ec2::254',
  ],
  'a loopback address': ['127.0.0.1', '127.255.255.254', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::7f00:1'],
  'a link-local address': ['169.254.0.0', '169.254.255.255', 'fe80::1', 'febf:ffff::1', '::ffff:169.254.0.1'],
  'a private address': [
    '10.0.0.0',
    '10.255.255.255',
    '172.16.0.0',
    '172.31.255.255',
    '192.168.0.0',
    '192.168.255.255',
    'fc00::1',
    'fdff:ffff::1',
    '::ffff:10.1.2.3',
    '::ffff:ac10:1',
    '::ffff:192.168.1.1',
    '64:ff9b::a00:1',
  ],
  'a carrier-grade NAT address': ['100.64.0.0', '100.127.255.255', '::ffff:100.64.0.1', '64:ff9b::6440:1'],
  'a benchmarking address': ['198.18.0.0', '198.19.255.255', '64:ff9b::c612:1'],
  'a site-local address': ['fec0::1', 'feff:ffff::1'],
  'an IPv4-compatible address': ['::a9fe:a9fe', '::169.254.169.254', '::808:808', '::0.0.0.2'],
  'a local-use NAT64 address': ['64:ff9b:1::a9fe:a9fe', '64:ff9b:1:ffff::1'],
  'an unspecified address': ['0.0.0.0', '0.1.2.3', '::', '::ffff:0.0.0.0', '64:ff9b::'],
  'a multicast address': ['224.0.0.1', '239.255.255.255', 'ff02::1'],
  'a reserved address': ['240.0.0.1', '255.255.255.255'],
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
  '100.63.255.255',
  '100.128.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '2606:4700:4700::1111',
  'fbff:ffff::1',
  'fe7f:ffff::1',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '64:ff9b:0:1::1',
];

describe('addressRefusal without private addresses (Lambda)', () => {
  for (const [kind, addresses] of Object.entries(NON_PUBLIC)) {
    it(`refuses ${kind}`, () => {
      for (const address of addresses) expect(addressRefusal(address, false), address).toBe(`${address} is ${kind}`);
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
