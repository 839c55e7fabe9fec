import { createPrivateKey, hkdfSync } from 'node:crypto';
import type { ServerKey } from '../ports/signer.ts';

/**
 * The key that makes API session tokens (`session-token.ts`): 32 bytes derived with HKDF-SHA256 from the server key
 * (its PKCS#8 DER), never stored. Whoever holds the server key (the functions that log in or sign JWTs, the routers'
 * control channel endpoint) derives the same key, so a login makes a token the endpoint can make again for the
 * routers. The derivation's salt and info name this one use: the key is independent of the server key's other uses
 * (the TLS server, JWT signatures), and a new server key makes a new token key.
 */
const SALT = 'ziti-controller';
const INFO = 'api-session-token-key v1';
const KEY_BYTES = 32;

/** Derived once per process and server key, on first use (a login's, the endpoint's first sync): no cold-start cost. */
const derived = new WeakMap<ServerKey, Promise<Uint8Array>>();

/** The token key of this server key; a failed read of the key (a network blip) is tried again on the next call. */
export function apiSessionTokenKey(server: ServerKey): Promise<Uint8Array> {
  let key = derived.get(server);
  if (!key) {
    key = derive(server);
    derived.set(server, key);
    key.catch(() => {
      if (derived.get(server) === key) derived.delete(server);
    });
  }
  return key;
}

async function derive(server: ServerKey): Promise<Uint8Array> {
  const der = createPrivateKey(await server.privateKeyPem()).export({ format: 'der', type: 'pkcs8' });
  return new Uint8Array(hkdfSync('sha256', der, SALT, INFO, KEY_BYTES));
}
