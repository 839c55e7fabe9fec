import { timingSafeEqual } from 'node:crypto';
import { edgeRouters } from '#shared/entities/edge-router.ts';
import { type TransitRouter, transitRouters } from '#shared/entities/router.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { fitsKey } from '#shared/store/keys.ts';
import type { ControlFeatureFactory } from './control-plane.ts';
import { ContentType, resultMessage } from './message.ts';
import { decodeBody } from './protobuf-codec.ts';

interface VerifyRouter {
  readonly routerId: string;
  readonly fingerprints: readonly string[];
}

/** A certificate chain is a few certificates; a router presents no more fingerprints than this. */
const MAX_FINGERPRINTS = 16;
/** A SHA-1 fingerprint is 40 hex characters; a longer string is none. */
const MAX_FINGERPRINT_LENGTH = 64;

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The edge or transit router stored under `id`, if any (every edge router is also a fabric router). */
async function routerById(deps: Deps, id: string): Promise<TransitRouter | undefined> {
  if (!fitsKey(id)) return undefined;
  return (await deps.store.get(edgeRouters, id))?.doc ?? (await deps.store.get(transitRouters, id))?.doc;
}

/** Why the router dialing a link is not the one it claims, or undefined when it is. */
async function refusalOf(deps: Deps, request: VerifyRouter): Promise<string | undefined> {
  const router = await routerById(deps, request.routerId);
  if (!router) return 'no router has this id';
  if (!router.fingerprint) return 'the router is not enrolled';
  if (router.disabled) return 'the router is disabled';
  const presented = request.fingerprints.slice(0, MAX_FINGERPRINTS).filter((f) => f.length <= MAX_FINGERPRINT_LENGTH);
  const stored = router.fingerprint;
  // Every presented certificate's fingerprint is compared (the chain's CAs among them), each in constant time.
  const matches = presented.map((fingerprint) => sameText(fingerprint.toLowerCase(), stored));
  if (!matches.includes(true)) return "no certificate presented is the router's enrolled one";
  return undefined;
}

/**
 * Links between routers are authenticated here: a router accepting a link asks whether the router dialing it is the
 * one it claims (VerifyRouter, 1036, with the SHA-1 fingerprint of each certificate the dialer presented), and drops
 * the link unless a successful result answers within 10 s. The dialer is who it claims when one of those fingerprints
 * is the one its router stored at enrollment (or last extension), as the reference checks; beyond the reference, a
 * disabled router is refused too, so a disabled router links to nobody (its control channel is closed already), and a
 * re-enrolled router's old certificate no longer matches anything. Any connected router may ask (edge or transit);
 * the reason of a refusal is logged here, and the asking router told only that its peer could not be verified.
 */
export const linkVerification: ControlFeatureFactory = ({ deps }) => ({
  bind({ channel }) {
    channel.handle(ContentType.verifyRouter, async (message) => {
      const request = decodeBody<VerifyRouter>('ctrl.VerifyRouter', message.body);
      const claimedId = request.routerId.slice(0, 64);
      let refusal: string | undefined;
      try {
        refusal = await refusalOf(deps, request);
      } catch (error) {
        // The router retries the link: a table that fails now is read again at its next dial.
        channel.reply(message, resultMessage(false, `could not verify router ${claimedId} now`));
        channel.log.failed('ctrl channel could not verify a router for a link', {
          claimedId,
          detail: (error as Error).message,
        });
        return;
      }
      if (refusal) {
        channel.reply(message, resultMessage(false, `could not verify router ${claimedId}`));
        channel.log.warn('ctrl channel refused to verify a router for a link', { claimedId, reason: refusal });
        return;
      }
      channel.reply(message, resultMessage(true, 'router verified'));
      channel.log.info('ctrl channel verified a router for a link', { claimedId });
    });
  },
});
