import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServerCertificate } from '#local/tls-certificate.ts';
import type { JwksConfig } from '#shared/config.ts';
import type { Resolve } from '#shared/ext-jwt/endpoint-addresses.ts';
import { fetchJwks, keySetFor } from '#shared/ext-jwt/jwks-cache.ts';
import { JwksError } from '#shared/ext-jwt/jwks-error.ts';

let server: Server;
let origin = '';
let config: JwksConfig;
const hits = new Map<string, number>();
let keys = [{ kty: 'EC', kid: 'a' }];
let flakyUp = true;

beforeAll(async () => {
  const tls = await createServerCertificate(['localhost', 'jwks.example.test']);
  config = {
    timeoutMs: 300,
    maxBytes: 4096,
    cacheSeconds: 60,
    refetchCooldownSeconds: 10,
    trustedCaPem: tls.cert,
    allowPrivateAddresses: true,
  };
  server = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    const path = request.url ?? '';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path.startsWith('/keys')) {
      // A little late, so concurrent callers overlap.
      setTimeout(() => response.writeHead(200).end(JSON.stringify({ keys })), 20);
    } else if (path === '/flaky') {
      if (flakyUp) response.writeHead(200).end(JSON.stringify({ keys: [{ kty: 'EC', kid: 'a' }] }));
      else response.writeHead(503).end();
    } else if (path === '/no-keys') response.writeHead(200).end('{"keys": "none"}');
    else if (path === '/slow-body') {
      response.writeHead(200);
      response.write('{"keys": [');
    } else response.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('fetchJwks', () => {
  it('refuses anything but https, a key set without a keys array, an error status and a body that never ends', async () => {
    await expect(fetchJwks(`http://127.0.0.1/keys`, config)).rejects.toBeInstanceOf(JwksError);
    await expect(fetchJwks(`${origin}/no-keys`, config)).rejects.toThrow(/no keys array/);
    await expect(fetchJwks(`${origin}/error`, config)).rejects.toThrow(/answered 500/);
    await expect(fetchJwks(`${origin}/slow-body`, config)).rejects.toThrow(/took over 300 ms/);
  });

  it('refuses an endpoint with a user name or password (a signer saved before the API refused it) unfetched', async () => {
    const withCredentials = origin.replace('https://', 'https://admin:secret@');

    await expect(fetchJwks(`${withCredentials}/keys-userinfo`, config)).rejects.toThrow(/user name or password/);
    expect(hits.get('/keys-userinfo')).toBeUndefined();
  });

  it('refuses a server it does not trust', async () => {
    await expect(fetchJwks(`${origin}/keys`, { ...config, trustedCaPem: undefined })).rejects.toBeInstanceOf(JwksError);
  });
});

describe('fetchJwks where private addresses are not allowed (Lambda)', () => {
  const noPrivate = () => ({ ...config, allowPrivateAddresses: false });
  const port = () => new URL(origin).port;
  /** A resolver that answers these addresses for any name, counting its calls. */
  const resolvingTo = (...addresses: string[]) => {
    const calls: string[] = [];
    const resolve: Resolve = async (hostname) => {
      calls.push(hostname);
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    return { resolve, calls };
  };

  it('refuses a loopback endpoint before connecting to it, by address, by name and in IPv4-mapped form', async () => {
    await expect(fetchJwks(`${origin}/keys?literal`, noPrivate())).rejects.toThrow(
      /127\.0\.0\.1 is a loopback address/,
    );
    await expect(fetchJwks(`https://localhost:${port()}/keys?by-name`, noPrivate())).rejects.toThrow(
      /JWKS host localhost refused: .* is a loopback address/,
    );
    await expect(fetchJwks(`https://[::ffff:127.0.0.1]:${port()}/keys?mapped`, noPrivate())).rejects.toThrow(
      /loopback address/,
    );
    for (const path of ['/keys?literal', '/keys?by-name', '/keys?mapped']) expect(hits.get(path)).toBeUndefined();
    // The same endpoint is fine where private addresses are allowed (npm start, tests).
    expect((await fetchJwks(`${origin}/keys?literal`, config)).keys).toHaveLength(1);
  });

  it('checks every address the host resolves to, not only the first', async () => {
    const { resolve } = resolvingTo('93.184.215.14', '169.254.169.254');
    await expect(fetchJwks('https://idp.example.test/keys', noPrivate(), resolve)).rejects.toThrow(
      /JWKS host idp\.example\.test refused: 169\.254\.169\.254 is a metadata address/,
    );
  });

  it('connects to the address it checked, resolving once, with TLS checking the host name', async () => {
    const { resolve, calls } = resolvingTo('127.0.0.1');
    // jwks.example.test is in no DNS: the keys can only come through the address the resolver answered.
    const jwks = await fetchJwks(`https://jwks.example.test:${port()}/keys?pinned`, config, resolve);
    expect(jwks.keys).toHaveLength(1);
    expect(calls).toEqual(['jwks.example.test']);
    // The server's certificate does not name this host: pinning the address does not skip hostname verification.
    await expect(fetchJwks(`https://other.example.test:${port()}/keys`, config, resolve)).rejects.toThrow(
      /other\.example\.test/,
    );
  });

  it('bounds name resolution by the timeout too, and refuses a name that does not resolve', async () => {
    const hanging: Resolve = () => new Promise(() => {});
    await expect(fetchJwks('https://idp.example.test/keys', config, hanging)).rejects.toThrow(/took over 300 ms/);
    const failing: Resolve = () => Promise.reject(new Error('getaddrinfo ENOTFOUND'));
    await expect(fetchJwks('https://idp.example.test/keys', config, failing)).rejects.toThrow(/does not resolve/);
    await expect(fetchJwks('https://idp.example.test/keys', config, resolvingTo().resolve)).rejects.toThrow(
      /has no address/,
    );
  });
});

describe('keySetFor', () => {
  it('shares one fetch between concurrent callers and serves known kids from the cache', async () => {
    const endpoint = `${origin}/keys?shared`;
    const sets = await Promise.all([1, 2, 3].map(() => keySetFor(endpoint, 'a', config, 1_000)));
    expect(sets.every((set) => set.keys[0]?.kid === 'a')).toBe(true);
    await keySetFor(endpoint, 'a', config, 2_000);
    expect(hits.get('/keys?shared')).toBe(1);
  });

  it('fetches again for an unknown kid only after the cooldown, and when the cache is stale', async () => {
    const endpoint = `${origin}/keys?rotating`;
    keys = [{ kty: 'EC', kid: 'a' }];
    await keySetFor(endpoint, 'a', config, 0);
    keys = [{ kty: 'EC', kid: 'b' }];
    expect((await keySetFor(endpoint, 'b', config, 5_000)).keys[0]?.kid).toBe('a');
    expect((await keySetFor(endpoint, 'b', config, 11_000)).keys[0]?.kid).toBe('b');
    expect(hits.get('/keys?rotating')).toBe(2);
    await keySetFor(endpoint, 'b', config, 11_000 + 61_000);
    expect(hits.get('/keys?rotating')).toBe(3);
  });

  it('remembers a failure for the cooldown, so a dead endpoint is not hammered', async () => {
    const endpoint = `${origin}/error?dead`;
    await expect(keySetFor(endpoint, 'a', config, 0)).rejects.toBeInstanceOf(JwksError);
    await expect(keySetFor(endpoint, 'a', config, 1_000)).rejects.toThrow(/failed recently/);
    expect(hits.get('/error?dead')).toBe(1);
  });

  it('never trusts a key set past its cache period because refetching it failed', async () => {
    const endpoint = `${origin}/flaky`;
    flakyUp = true;
    await keySetFor(endpoint, 'a', config, 0);
    flakyUp = false;
    // An unknown kid while the set is fresh: the refetch fails, the fresh set still serves until it expires.
    await expect(keySetFor(endpoint, 'b', config, 30_000)).rejects.toThrow(/answered 503/);
    expect((await keySetFor(endpoint, 'a', config, 35_000)).keys[0]?.kid).toBe('a');
    // Past the cache period the old set is not served again, whatever the failures in between.
    await expect(keySetFor(endpoint, 'a', config, 61_000)).rejects.toThrow(/answered 503/);
    await expect(keySetFor(endpoint, 'a', config, 62_000)).rejects.toThrow(/failed recently/);
    flakyUp = true;
    expect((await keySetFor(endpoint, 'a', config, 72_000)).keys[0]?.kid).toBe('a');
    expect(hits.get('/flaky')).toBe(4);
  });
});
