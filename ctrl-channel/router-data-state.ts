import { createHash } from 'node:crypto';
import type { EdgeRouter } from '#shared/entities/edge-router.ts';
import { type Identity, identities, isDisabledAt } from '#shared/entities/identity.ts';
import { CONTROLLER_ID } from '#shared/ids.ts';
import { certificatesOf, fingerprintOf } from '#shared/pki/certificates.ts';
import { networkCa } from '#shared/pki/network-ca.ts';
import { sessionJwtVerificationKey } from '#shared/pki/session-jwt.ts';
import { selectable } from '#shared/policy/access.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { type PolicyEvent, type PolicyModel, type PolicyPart, policyModel } from './policy-data-state.ts';
import { encodeBody } from './protobuf-codec.ts';
import type { ConnectingRouter } from './router-certificate.ts';
import { reachOfRouter } from './router-reach.ts';

/** One event of a DataState (`edge.DataEvent`): a create of one model, as a full state lists them. */
export type DataEvent =
  | ({ readonly action: 'Create'; readonly isSynthetic?: boolean } & (
      | { readonly publicKey: object }
      | { readonly identity: object }
    ))
  | PolicyEvent;

/** What a router's data model holds, built for one router: its events, and what tells one build from the next. */
export interface RouterDataState {
  readonly events: readonly DataEvent[];
  /** Each event as encoded to measure it (`edge.DataEvent`), in order: the DataState's body is made of them. */
  readonly encodedEvents: readonly Buffer[];
  /** A hash of the encoded events: equal builds have equal digests, so an unchanged model need not be sent again. */
  readonly digest: string;
  readonly identityCount: number;
  /** The ids of the identities sent. */
  readonly identityIds: readonly string[];
  /** Identities the router may use that did not fit in the message (see {@link boundedEvents}). */
  readonly omittedIdentities: number;
  /**
   * The policy part of the identities the router may use (`policy-data-state.ts`), every edge router's: what it holds,
   * or, `omitted`, what did not fit in the message whole beside every identity and was left out (the router then
   * refuses every Dial and Bind of those identities' OIDC sessions: it has no policy that grants them).
   */
  readonly policies: PolicyCounts & { readonly identities: number; readonly omitted: boolean };
  /**
   * Set for a router that tunnels (`isTunnelerEnabled`, its own identity there): what the model holds of its own
   * identity's grants, or `omitted` when they did not fit in the message whole.
   */
  readonly tunneler?: PolicyCounts & { readonly omitted: boolean };
}

type PolicyCounts = Pick<PolicyPart, 'services' | 'servicePolicies' | 'postureChecks'>;

/** Identities read per batch read. */
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
 * overrides only for a tunneling router's own identity (`PolicyModel.identityServiceConfigs`).
 */
function identityEvent(
  identity: Identity,
  now: Date,
  serviceConfigs: PolicyModel['identityServiceConfigs'] = {},
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
 * The router's own identity, for a router that tunnels: tunneling on (`isTunnelerEnabled`) and its identity (type
 * `Router`, the router's id: `router-identity.ts`) there. None for a router that does not: it has no identity of its
 * own to host or intercept for.
 */
async function tunnelerIdentityOf(deps: Deps, router: EdgeRouter | undefined): Promise<Identity | undefined> {
  if (!router?.isTunnelerEnabled) return undefined;
  const identity = await deps.store.get(identities, router.id, 'clientGrants');
  return identity?.doc.typeId === 'Router' ? identity.doc : undefined;
}

/** The identities of these ids still stored, in id order, read a page at a time. */
async function identitiesOf(deps: Deps, ids: readonly string[]): Promise<Identity[]> {
  const read: Identity[] = [];
  for (let start = 0; start < ids.length; start += IDENTITY_PAGE) {
    read.push(...(await deps.store.getMany(identities, ids.slice(start, start + IDENTITY_PAGE), 'listPage')));
  }
  return read;
}

/** Events with their encoded bytes, and the room they take in the DataState. */
interface Measured {
  readonly events: readonly DataEvent[];
  readonly encoded: readonly Buffer[];
  readonly size: number;
}

function measured(events: readonly DataEvent[]): Measured {
  const encoded = events.map(encodedEvent);
  return { events, encoded, size: encoded.reduce((sum, bytes) => sum + bytes.length + EVENT_FRAMING_BYTES, 0) };
}

function joined(parts: readonly Measured[]): Measured {
  return {
    events: parts.flatMap((part) => part.events),
    encoded: parts.flatMap((part) => part.encoded),
    size: parts.reduce((sum, part) => sum + part.size, 0),
  };
}

const countsOf = ({ services, servicePolicies, postureChecks }: PolicyPart): PolicyCounts => ({
  services,
  servicePolicies,
  postureChecks,
});

/**
 * The router's data model as this controller keeps it: the public keys; for a tunneling router its own identity with
 * its configs; the identities that may use the router (`router-reach.ts`); and the policy part of all of them
 * (`policy-data-state.ts`), which the reference sends every router: it checks an OIDC session's Dial and Bind against
 * it, and for every session (legacy ones too) closes the terminators and circuits of access an identity loses. All of
 * it when it fits in `maxBodyBytes`. When it does not, the policy part is left out whole, never in part (a model
 * missing some policies would have the router refuse, or cut, access the others grant): a tunneling router still gets
 * its own identity's grants (related to it alone) when they fit, before the identities, as its tunnel hosts and
 * intercepts by them; and the identities take the room left, as many as fit in id order.
 */
export async function buildRouterDataState(
  deps: Deps,
  router: ConnectingRouter,
  maxBodyBytes: number,
): Promise<RouterDataState> {
  const [keys, reach] = await Promise.all([publicKeyEvents(deps), reachOfRouter(deps, router)]);
  const [own, reached] = await Promise.all([
    tunnelerIdentityOf(deps, reach.stored),
    identitiesOf(deps, reach.identityIds),
  ]);
  const others = own ? reached.filter((identity) => identity.id !== own.id) : reached;
  const subjects = [...(own ? [own] : []), ...others];
  const model = await policyModel(deps, {
    identities: subjects.map(selectable),
    ...(own ? { tunneler: own } : {}),
  });
  const now = deps.now();
  const keyEvents = measured(keys);
  const budget = maxBodyBytes - STATE_OVERHEAD_BYTES - keyEvents.size;
  const ownEvents = measured(own ? [...model.configEvents, identityEvent(own, now, model.identityServiceConfigs)] : []);
  const plain = (identity: Identity) => ({ id: identity.id, ...measured([identityEvent(identity, now)]) });
  const otherEvents = others.map(plain);
  const whole = measured(model.whole.events);
  const policyCounts = { ...countsOf(model.whole), identities: subjects.length };

  if (ownEvents.size + otherEvents.reduce((sum, event) => sum + event.size, 0) + whole.size <= budget) {
    return stateOf(joined([keyEvents, ownEvents, ...otherEvents, whole]), {
      identityIds: subjects.map((identity) => identity.id),
      omittedIdentities: 0,
      policies: { ...policyCounts, omitted: false },
      ...(model.tunnelerOnly ? { tunneler: { ...countsOf(model.tunnelerOnly), omitted: false } } : {}),
    });
  }

  const ownOnly = measured(model.tunnelerOnly?.events ?? []);
  const tunnelerFits = own !== undefined && ownEvents.size + ownOnly.size <= budget;
  // A tunneler left out is sent as any identity is, if it may use itself.
  const candidates = tunnelerFits ? otherEvents : reached.map(plain);
  const room = budget - (tunnelerFits ? ownEvents.size + ownOnly.size : 0);
  const { fitting, omitted } = boundedEvents(
    candidates.map((event) => ({ event, size: event.size - EVENT_FRAMING_BYTES })),
    room,
  );
  return stateOf(joined(tunnelerFits ? [keyEvents, ownEvents, ...fitting, ownOnly] : [keyEvents, ...fitting]), {
    identityIds: [...(tunnelerFits ? [own.id] : []), ...fitting.map((event) => event.id)],
    omittedIdentities: omitted,
    policies: { ...policyCounts, omitted: model.whole.servicePolicies > 0 },
    ...(model.tunnelerOnly ? { tunneler: { ...countsOf(model.tunnelerOnly), omitted: !tunnelerFits } } : {}),
  });
}

function stateOf(
  sent: Measured,
  counts: Omit<RouterDataState, 'events' | 'encodedEvents' | 'digest' | 'identityCount'>,
): RouterDataState {
  const digest = createHash('sha256');
  for (const bytes of sent.encoded) digest.update(bytes);
  return {
    events: sent.events,
    encodedEvents: sent.encoded,
    digest: digest.digest('base64url'),
    identityCount: counts.identityIds.length,
    ...counts,
  };
}
