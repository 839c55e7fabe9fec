import { describe, expect, it } from 'vitest';
import { addressKindOf, canonicalHost } from '#shared/net/address-kind.ts';

describe('canonicalHost', () => {
  it('reads an IPv4 address in every numeric spelling URL parsers and inet_aton accept as its dotted quad', () => {
    for (const spelling of ['2852039166', '0xa9fea9fe', '0XA9FEA9FE', '0251.0376.0251.0376', '169.254.43518']) {
      expect(canonicalHost(spelling), spelling).toBe('169.254.169.254');
    }
    expect(canonicalHost('169.16689662')).toBe('169.254.169.254');
    expect(canonicalHost('127.1')).toBe('127.0.0.1');
    expect(canonicalHost('0x7f.1')).toBe('127.0.0.1');
  });

  it('drops case and one trailing dot', () => {
    expect(canonicalHost('LocalHost.')).toBe('localhost');
    expect(canonicalHost('Router.Example.COM')).toBe('router.example.com');
    expect(canonicalHost('169.254.169.254.')).toBe('169.254.169.254');
  });

  it('writes an IPv6 address in its canonical form, brackets or not, with an IPv4 tail as hex', () => {
    expect(canonicalHost('[::FFFF:169.254.169.254]')).toBe('::ffff:a9fe:a9fe');
    expect(canonicalHost('0:0:0:0:0:0:0:1')).toBe('::1');
    expect(canonicalHost('64:FF9B:0::169.254.169.254')).toBe('64:ff9b::a9fe:a9fe');
  });

  it('refuses a numeric last label that is no address, and anything but a host (a port, a path, a space)', () => {
    for (const host of ['router.123', '1.2.3.4.5', '1.2.3.999999999', '09', 'a:80', 'a/b', 'a b', '', '[::1']) {
      expect(canonicalHost(host), host).toBeUndefined();
    }
  });
});

describe('addressKindOf', () => {
  it('judges an IPv6 address by the IPv4 address it carries (mapped, translated, NAT64), whatever its spelling', () => {
    expect(addressKindOf('::ffff:a9fe:a9fe')).toBe('metadata');
    expect(addressKindOf('::ffff:0:7f00:1')).toBe('loopback');
    expect(addressKindOf('64:ff9b::a00:1')).toBe('private');
    expect(addressKindOf('64:ff9b::808:808')).toBeUndefined();
    expect(addressKindOf('2852039166')).toBe('metadata');
  });

  it('has no kind for what is no IP address', () => {
    expect(addressKindOf('localhost')).toBeUndefined();
    expect(addressKindOf('router.123')).toBeUndefined();
  });
});
