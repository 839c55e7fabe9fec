import { type Ca, cas } from '../entities/ca.ts';
import type { Deps } from '../ports/deps.ts';
import { allIds } from '../store/index-queries.ts';
import { networkCa } from './network-ca.ts';

/**
 * Every registered CA (a network has a handful; the kit's type index lists them). What cert login, auto-enrollment
 * and the truststore read.
 */
export async function allCas(deps: Deps): Promise<Ca[]> {
  const ids = await allIds(deps.store, cas.collection);
  const stored = await deps.store.getManyStored(cas, ids);
  return stored.map((entry) => entry.doc);
}

/** The PEM bundle the mTLS domain trusts: the network's root and signing CA, then each verified third-party CA. */
export async function truststoreBundle(deps: Deps): Promise<string> {
  const [ca, registered] = await Promise.all([networkCa(deps), allCas(deps)]);
  const verified = registered.filter((entry) => entry.isVerified).map((entry) => entry.certPem.trim());
  return `${[ca.rootCertPem.trim(), ca.signingCertPem.trim(), ...verified].join('\n')}\n`;
}

/** Publishes the current truststore; a CA was verified or deleted. */
export async function refreshTruststore(deps: Deps): Promise<void> {
  await deps.truststore.publish(await truststoreBundle(deps));
}
