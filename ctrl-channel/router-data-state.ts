import { createHash } from 'node:crypto';
import { type Identity, identities, isDisabledAt } from '#shared/entities/identity.ts';
import { CONTROLLER_ID } from '#shared/ids.ts';
import { certificatesOf, fingerprintOf } from '#shared/pki/certificates.ts';
import { networkCa } from '#shared/pki/network-ca.ts';
import { sessionJwtVerificationKey } from '#shared/pki/session-jwt.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { encodeBody } from './protobuf-codec.ts';
import type { ConnectingRouter } from './router-certificate.ts';
import { identitiesReaching } from './router-reach.ts';

/** One event of a DataState (`edge.DataEvent`): a create of one model, as a full state lists them. */
export type DataEvent = { readonly action: 'Create'; readonly isSynthetic?: boolean } & (
  | { readonly publicKey: object }
  | { readonly identity: object }
);

/** What a router's data model holds, built for one router: its events, and what tells one build from the next. */
export interface RouterDataState {
  readonly events: readonly DataEvent[];
  /** Each event as encoded to measure it (`edge.DataEvent`), in order: the DataState's body is made of them. */
  readonly encodedEvents: readonly Buffer[];
  /** A hash of the encoded events: equal builds have equal digests, so an unchanged model need not be sent again. */
  readonly digest: string;
  readonly identityCount: number;
  /** Identities the router may use that did not fit in the message (see {@link boundedEvents}). */
  readonly omittedIdentities: number;
}

/** Identities read per batch: a page's encoded events are measured before the next page is read. */
const IDENTITY_PAGE = 500;
/** What a DataState's fields beside its events take at most (end index, timeline id, their tags). */
const STATE_OVERHEAD_BYTES = 256;
/** A repeated field's tag and length prefix, per event (the prefix of an event up to 2 MiB is 3 bytes). */
const EVENT_FRAMING_BYTES = 4;

const PRECEDENCE = { default: 'Default', required: 'Required', failed: 'Failed' } as const;

/**
 * The timeline the router's model index counts on: one per network (the controller's id and the network's root CA),
 * so a router that kept a model of another network, or of a rebuilt one, is sent a full state.
 */
export async function timelineIdOf(deps: Deps): Promise<string> {
  const ca = await networkCa(deps);
  const [root] = certificatesOf(ca.rootCertPem);
  return createHash('sha256')
    .update(CONTROLLER_ID)
    .update(root?.raw ?? Buffer.alloc(0))
    .digest('base64url')
    .slice(0, 22);
}

/**
 * The public keys a router needs: the key session JWTs are verified with (no Dial or Bind works without it), and the
 * network's CA certificates for client certificate validation, as the reference publishes its CAs (a v2.0.0-pre12
 * router does not read them yet: the first-party check uses the control channel's chain).
 */
async function publicKeyEvents(deps: Deps): Promise<DataEvent[]> {
  const [sessionKey, ca] = await Promise.all([sessionJwtVerificationKey(deps.signers.server), networkCa(deps)]);
  const caCertificates = [...certificatesOf(ca.rootCertPem), ...certificatesOf(ca.signingCertPem)];
  return [
    {
      action: 'Create',
      isSynthetic: true,
      publicKey: {
        data: Buffer.from(sessionKey.der),
        kid: sessionKey.kid,
        usages: [...sessionKey.usages],
        format: sessionKey.format,
      },
    },
    ...caCertificates.map(
      (certificate): DataEvent => ({
        action: 'Create',
        isSynthetic: true,
        publicKey: {
          data: certificate.raw,
          kid: fingerprintOf(certificate),
          usages: ['ClientX509CertValidation'],
          format: 'X509CertDer',
        },
      }),
    ),
  ];
}

/** An identity as the router data model carries it (the reference's `DataState.Identity`). */
function identityEvent(identity: Identity, now: Date): DataEvent {
  const appData = Object.keys(identity.appData).length > 0 ? JSON.stringify(identity.appData) : undefined;
  return {
    action: 'Create',
    identity: {
      id: identity.id,
      name: identity.name,
      defaultHostingPrecedence: PRECEDENCE[identity.defaultHostingPrecedence],
      defaultHostingCost: identity.defaultHostingCost,
      serviceHostingPrecedences: Object.fromEntries(
        Object.entries(identity.serviceHostingPrecedences).map(([serviceId, value]) => [serviceId, PRECEDENCE[value]]),
      ),
      serviceHostingCosts: identity.serviceHostingCosts,
      ...(appData ? { appDataJson: Buffer.from(appData) } : {}),
      // Disabled now, not as stored: a lockout whose time has passed no longer disables.
      disabled: isDisabledAt(identity, now),
    },
  };
}

function encodedEvent(event: DataEvent): Buffer {
  return encodeBody('edge.DataEvent', event);
}

/**
 * The events that fit in `budgetBytes`, in order, and how many did not: whole events only, so what is sent is a
 * correct model of fewer identities rather than a message the router cannot take.
 */
function boundedEvents<E>(
  events: readonly { readonly event: E; readonly size: number }[],
  budgetBytes: number,
): { fitting: E[]; omitted: number } {
  const fitting: E[] = [];
  let used = 0;
  for (const { event, size } of events) {
    if (used + size + EVENT_FRAMING_BYTES > budgetBytes) break;
    used += size + EVENT_FRAMING_BYTES;
    fitting.push(event);
  }
  return { fitting, omitted: events.length - fitting.length };
}

/**
 * The router's data model as this controller keeps it: the public keys, then the identities that may use the router
 * (`router-reach.ts`), read a page at a time and as many as fit in `maxBodyBytes` (the rest are counted and left out). No services, service policies or posture
 * checks: the API sessions are legacy ones, for which the router leaves access checks to the controller, and a
 * partial policy model would make it close connections for access it finds missing.
 */
export async function buildRouterDataState(
  deps: Deps,
  router: ConnectingRouter,
  maxBodyBytes: number,
): Promise<RouterDataState> {
  const [keys, identityIds] = await Promise.all([publicKeyEvents(deps), identitiesReaching(deps, router)]);
  const encoded = keys.map(encodedEvent);
  let budget = maxBodyBytes - STATE_OVERHEAD_BYTES - encoded.reduce((sum, bytes) => sum + bytes.length, 0);
  const events: DataEvent[] = [...keys];
  const now = deps.now();
  let identityCount = 0;
  let omittedIdentities = 0;
  for (let start = 0; start < identityIds.length; start += IDENTITY_PAGE) {
    const page = await deps.store.getMany(identities, identityIds.slice(start, start + IDENTITY_PAGE), 'listPage');
    const measured = page.map((identity) => {
      const event = identityEvent(identity, now);
      const bytes = encodedEvent(event);
      return { event: { event, bytes }, size: bytes.length };
    });
    const { fitting, omitted } = boundedEvents(measured, budget);
    for (const { event, bytes } of fitting) {
      events.push(event);
      encoded.push(bytes);
      budget -= bytes.length + EVENT_FRAMING_BYTES;
    }
    identityCount += fitting.length;
    if (omitted > 0) {
      omittedIdentities = identityIds.length - start - fitting.length;
      break;
    }
  }
  const digest = createHash('sha256');
  for (const bytes of encoded) digest.update(bytes);
  return { events, encodedEvents: encoded, digest: digest.digest('base64url'), identityCount, omittedIdentities };
}
