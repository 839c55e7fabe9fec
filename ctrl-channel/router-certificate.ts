import { timingSafeEqual, type X509Certificate } from 'node:crypto';
import { edgeRouters } from '#shared/entities/edge-router.ts';
import type { EntityDefinition } from '#shared/entities/entity-definition.ts';
import { type TransitRouter, transitRouters } from '#shared/entities/router.ts';
import { certificatesOf, chainsTo, fingerprintOf, isExpiredAt } from '#shared/pki/certificates.ts';
import { networkCa } from '#shared/pki/network-ca.ts';
import type { Deps } from '#shared/ports/deps.ts';

/** The router a control channel belongs to: found by its certificate, the id its hello claims checked against it. */
export interface ConnectingRouter {
  readonly id: string;
  readonly name: string;
  readonly kind: 'edge-router' | 'transit-router';
  /** The SHA-1 fingerprint of the certificate it connected with: its connection counts only while the router's is it. */
  readonly fingerprint: string;
}

/** Why a router is refused; `reason` goes back to the router and into the log (it names nothing secret). */
export class RouterRefused extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(reason);
    this.reason = reason;
    this.name = 'RouterRefused';
  }
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * The enrolled router whose client certificate this is, as the reference's connect handler decides: the certificate
 * chains to the network's CA (it was issued by an enrollment here), is within its validity, and its SHA-1
 * fingerprint is the one an edge or transit router stored when it enrolled (or last extended); the hello's id must be
 * that router's, and the router not disabled. The TLS handshake has already proved the router holds the key.
 */
export async function routerOfCertificate(
  deps: Deps,
  leaf: X509Certificate | undefined,
  claimedId: string,
): Promise<ConnectingRouter> {
  if (!leaf) throw new RouterRefused('no client certificate: a router connects with the certificate it enrolled');
  const ca = await networkCa(deps);
  const anchors = [...certificatesOf(ca.signingCertPem), ...certificatesOf(ca.rootCertPem)];
  if (!chainsTo(leaf, anchors)) throw new RouterRefused("the client certificate is not issued by this network's CA");
  if (isExpiredAt(leaf, deps.now())) throw new RouterRefused('the client certificate is outside its validity');
  const fingerprint = fingerprintOf(leaf);
  for (const [def, kind] of [
    [edgeRouters, 'edge-router'],
    [transitRouters, 'transit-router'],
  ] as [EntityDefinition<TransitRouter>, ConnectingRouter['kind']][]) {
    const id = await deps.store.findIdByUnique(def, 'fingerprint', fingerprint);
    const router = id ? (await deps.store.get(def, id))?.doc : undefined;
    if (!router?.fingerprint || !sameText(router.fingerprint, fingerprint)) continue;
    if (!sameText(router.id, claimedId)) {
      throw new RouterRefused("the hello's router id is not the id of the router the certificate was issued to");
    }
    if (router.disabled) throw new RouterRefused('the router is disabled');
    return { id: router.id, name: router.name, kind, fingerprint };
  }
  throw new RouterRefused("the client certificate is not an enrolled router's");
}
