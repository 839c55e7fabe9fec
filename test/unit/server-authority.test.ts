import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { serverAuthority } from '#local/proxy-event.ts';

const server = { port: 1280, names: new Set(['localhost', '127.0.0.1', '[::1]', '192.0.2.10']) };

describe('serverAuthority', () => {
  it.each([
    ['localhost:1280', 'localhost:1280'],
    ['LOCALHOST:1280', 'localhost:1280'],
    ['127.0.0.1:1280', '127.0.0.1:1280'],
    ['[::1]:1280', '[::1]:1280'],
    ['192.0.2.10:1280', '192.0.2.10:1280'],
  ])('keeps %s, a name of this server on its port', (host, expected) => {
    expect(serverAuthority(host, server)).toBe(expected);
  });

  it.each([
    ['another host', 'evil.example.com:1280'],
    ['another port', 'localhost:9999'],
    ['no port, which means 443', 'localhost'],
    ['a name with a path', 'localhost:1280/x'],
    ['user info', 'user@localhost:1280'],
    ['a quote and markup', 'localhost:1280"<script>'],
    ['an unclosed IPv6 bracket', '[::1:1280'],
    ['no Host at all', undefined],
    ['an empty Host', ''],
  ])('answers localhost on its port for %s', (_, host) => {
    expect(serverAuthority(host, server)).toBe('localhost:1280');
  });

  it('keeps a port-less name on a server that listens on 443', () => {
    expect(serverAuthority('localhost', { ...server, port: 443 })).toBe('localhost');
  });

  it('never answers anything but a name of this server on its port', () => {
    const allowed = [...server.names].map((name) => `${name}:${server.port}`);
    const nearMiss = fc
      .tuple(fc.string(), fc.constantFrom(...allowed), fc.string())
      .map(([before, authority, after]) => `${before}${authority}${after}`);
    fc.assert(
      fc.property(fc.oneof(fc.string(), nearMiss), (host) => {
        expect(allowed).toContain(serverAuthority(host, server));
      }),
      { numRuns: 300 },
    );
  });
});
