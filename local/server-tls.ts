import { isIP } from 'node:net';
import { networkCa } from '#shared/pki/network-ca.ts';
import { ensureServerCertificate } from '#shared/pki/server-certificate.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { TlsMaterial } from './tls-certificate.ts';

/** Names that always reach a local controller. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]', '']);

/**
 * The names the local server's certificate carries: the loopback names, the host it listens on when that is a
 * specific one, and the public names it is reached by (`CONTROLLER_PUBLIC_NAMES`, `PUBLIC_BASE_URL`'s host).
 */
export function localServerNames(options: {
  readonly listenHost?: string;
  readonly publicNames?: readonly string[];
  readonly publicBaseUrl?: string;
}): string[] {
  const names = [...LOOPBACK_NAMES];
  const add = (name: string | undefined) => {
    const bare = name?.replace(/^\[|\]$/g, '').toLowerCase();
    if (bare && !WILDCARDS.has(bare) && !names.includes(bare) && (isIP(bare) || /^[a-z0-9.-]+$/.test(bare))) {
      names.push(bare);
    }
  };
  add(options.listenHost);
  for (const name of options.publicNames ?? []) add(name.trim());
  if (options.publicBaseUrl) add(new URL(options.publicBaseUrl).hostname);
  return names;
}

/**
 * The local server's TLS material: the controller's server key and its certificate from the network CA (issued or
 * renewed as needed), presented with the signing CA; `rootCertPem` is what a client that trusts the network holds.
 */
export async function serverTls(deps: Deps, names: readonly string[]): Promise<TlsMaterial & { rootCertPem: string }> {
  const [certificate, key, ca] = await Promise.all([
    ensureServerCertificate(deps, names),
    deps.signers.server.privateKeyPem(),
    networkCa(deps),
  ]);
  return { key, cert: certificate.chainPem, rootCertPem: ca.rootCertPem };
}
