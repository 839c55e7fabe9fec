import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { addressRefusal } from './address-policy.ts';
import { JwksError } from './jwks-error.ts';

/** Every address a host name resolves to (an IP literal resolves to itself). */
export type Resolve = (hostname: string) => Promise<readonly LookupAddress[]>;

export const resolveAll: Resolve = (hostname) => lookup(hostname, { all: true });

/**
 * The addresses of a JWKS endpoint's host, each allowed by the address policy; a JwksError naming the first that is
 * not. Every address is checked, not only the first: the connection may fall back to any of them.
 */
export async function permittedAddresses(
  url: URL,
  allowPrivateAddresses: boolean,
  resolve: Resolve,
): Promise<readonly LookupAddress[]> {
  // URL keeps an IPv6 literal's brackets in `hostname`; resolvers want the bare address.
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: readonly LookupAddress[];
  try {
    addresses = await resolve(hostname);
  } catch (error) {
    throw new JwksError(`JWKS host ${hostname} does not resolve: ${(error as Error).message}`);
  }
  if (addresses.length === 0) throw new JwksError(`JWKS host ${hostname} has no address`);
  for (const { address } of addresses) {
    const refusal = addressRefusal(address, allowPrivateAddresses);
    if (refusal) throw new JwksError(`JWKS host ${hostname} refused: ${refusal}`);
  }
  return addresses;
}

function familyOf(option: number | 'IPv4' | 'IPv6' | undefined): number {
  if (option === 'IPv4') return 4;
  if (option === 'IPv6') return 6;
  return option ?? 0;
}

/**
 * A `lookup` for the HTTPS request that answers only the addresses already checked, so the socket connects to one of
 * them: a second DNS answer (rebinding) never gets a say. TLS still verifies the certificate against the host name.
 */
export function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const family = familyOf(options.family);
    const matching = addresses.filter((address) => family === 0 || address.family === family);
    const first = matching[0];
    if (!first) {
      const error: NodeJS.ErrnoException = new Error(`no IPv${family} address checked for ${hostname}`);
      error.code = 'ENOTFOUND';
      callback(error, '');
      return;
    }
    if (options.all) callback(null, matching);
    else callback(null, first.address, first.family);
  };
}
