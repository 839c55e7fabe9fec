import { createHash, X509Certificate } from 'node:crypto';
import type { Deps } from '../ports/deps.ts';
import { type NetworkCa, networkCa } from './network-ca.ts';

/** Each loaded network CA's instance id: every response names it, and parsing the root certificate each time showed. */
const idOfCa = new WeakMap<NetworkCa, string>();

/**
 * The controller's instance id (`ziti-instance-id` on every response): SDKs compare the value they saved with the
 * one they see, and crash without it. It must be stable across restarts and the same from every function, and name
 * this network's data: the SHA-256 of the network's root CA certificate, which the bootstrap makes once and never
 * changes. Read once per cold start with the network CA (which the PKI operations read anyway), and worked out once
 * per CA read.
 */
export async function instanceIdOf(deps: Deps): Promise<string> {
  const ca = await networkCa(deps);
  let id = idOfCa.get(ca);
  if (id === undefined) {
    id = createHash('sha256').update(new X509Certificate(ca.rootCertPem).raw).digest('hex').slice(0, 32);
    idOfCa.set(ca, id);
  }
  return id;
}
