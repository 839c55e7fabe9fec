import { createHash } from 'node:crypto';
import type { EdgeRouter } from '#shared/entities/edge-router.ts';
import { type Identity, identities, isDisabledAt } from '#shared/entities/identity.ts';
import { CONTROLLER_ID } from '#shared/ids.ts';
import { certificatesOf, fingerprintOf } from '#shared/pki/certificates.ts';
import { networkCa } from '#shared/pki/network-ca.ts';
import { sessionJwtVerificationKey } from '#shared/pki/session-jwt.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { encodeBody } from './protobuf-codec.ts';
import type { ConnectingRouter } from './router-certificate.ts';
import { reachOfRouter } from './router-reach.ts';
import { type TunnelerEvent, type TunnelerModel, tunnelerModel } from './tunneler-data-state.ts';

/** One event of a DataState (`edge.DataEvent`): a create of one model, as a full state lists them. */
export type DataEvent =
  | ({ readonly action: 'Create'; readonly isSynthetic?: boolean } & (
      | { readonly publicKey: object }
      | { readonly identity: object }
    ))
  | TunnelerEvent;

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
  /**
   * Set for a router that tunnels (`isTunnelerEnabled`, its own identity there): what the model holds of its own
   * identity's grants (`tunneler-data-state.ts`), or `omitted` when they did not fit in the message whole.
   */
  readonly tunneler?: { readonly services: number; readonly servicePolicies: number; readonly omitted: boolean };
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

/**
 * An identity as the router data model carries it (the reference's `DataState.Identity`); its service-config
 * overrides only for a tunneling router's own identity (`TunnelerModel.identityServiceConfigs`).
 */
function identityEvent(
  identity: Identity,
  now: Date,
  serviceConfigs: TunnelerModel['identityServiceConfigs'] = {},
): DataEvent {
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
      serviceConfigs,
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
 * The router's own identity and what it is granted, for a router that tunnels: tunneling on (`isTunnelerEnabled`) and
 * its identity (type `Router`, the router's id: `router-identity.ts`) there. None for a router that does not: it has
 * no identity of its own to host or intercept for, and a policy model would only have it judge its SDKs' access, which
 * for legacy API sessions the controller judges (see {@link buildRouterDataState}).
 */
async function tunnelerOf(
  deps: Deps,
  router: EdgeRouter | undefined,
): Promise<{ identity: Identity; model: TunnelerModel } | undefined> {
  if (!router?.isTunnelerEnabled) return undefined;
  const identity = await deps.store.get(identities, router.id, 'clientGrants');
  if (identity?.doc.typeId !== 'Router') return undefined;
  return { identity: identity.doc, model: await tunnelerModel(deps, identity.doc) };
}

/** The events' encoded bytes with the room each takes in the DataState. */
const sizeOf = (encoded: readonly Buffer[]) =>
  encoded.reduce((sum, bytes) => sum + bytes.length + EVENT_FRAMING_BYTES, 0);

/**
 * The router's data model as this controller keeps it: the public keys, then the identities that may use the router
 * (`router-reach.ts`), read a page at a time and as many as fit in `maxBodyBytes` (the rest are counted and left out).
 * A router without a tunneler gets no services, service policies, configs or posture checks: the API sessions are
 * legacy ones, for which the router leaves access checks to the controller, and a policy model would make it compare
 * each identity's services before and after every change and close connections for access it finds missing. A
 * tunneling router also gets what its own identity is granted (`tunneler-data-state.ts`), whole or not at all (a
 * partial policy model would have it stop hosting what it may host), before the identities take the room left; its
 * identity is always sent, first, as its tunnel subscribes to it.
 */
export async function buildRouterDataState(
  deps: Deps,
  router: ConnectingRouter,
  maxBodyBytes: number,
): Promise<RouterDataState> {
  const [keys, reach] = await Promise.all([publicKeyEvents(deps), reachOfRouter(deps, router)]);
  const tunneling = await tunnelerOf(deps, reach.stored);
  const now = deps.now();
  const events: DataEvent[] = [...keys];
  const encoded = keys.map(encodedEvent);
  let budget = maxBodyBytes - STATE_OVERHEAD_BYTES - sizeOf(encoded);

  let tunneler: RouterDataState['tunneler'];
  let policyEvents: { events: readonly DataEvent[]; encoded: readonly Buffer[] } = { events: [], encoded: [] };
  let identityIds = reach.identityIds;
  if (tunneling) {
    const { identity, model } = tunneling;
    const before = [...model.configEvents, identityEvent(identity, now, model.identityServiceConfigs)];
    const encodedBefore = before.map(encodedEvent);
    const encodedAfter = model.policyEvents.map(encodedEvent);
    const size = sizeOf(encodedBefore) + sizeOf(encodedAfter);
    const omitted = size > budget;
    tunneler = { services: model.services, servicePolicies: model.servicePolicies, omitted };
    if (!omitted) {
      events.push(...before);
      encoded.push(...encodedBefore);
      policyEvents = { events: model.policyEvents, encoded: encodedAfter };
      budget -= size;
      identityIds = identityIds.filter((id) => id !== identity.id);
    }
  }

  let identityCount = tunneler && !tunneler.omitted ? 1 : 0;
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
  // The policies after the identities they relate to, as the router applies a full state in order.
  events.push(...policyEvents.events);
  encoded.push(...policyEvents.encoded);
  const digest = createHash('sha256');
  for (const bytes of encoded) digest.update(bytes);
  return {
    events,
    encodedEvents: encoded,
    digest: digest.digest('base64url'),
    identityCount,
    omittedIdentities,
    ...(tunneler ? { tunneler } : {}),
  };
}
