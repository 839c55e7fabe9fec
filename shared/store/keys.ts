/**
 * The single table's layout: every key shape is built here and nowhere else, and every item kind is named by its
 * prefix (`PREFIXES`, `itemKindOf`), so the writes and the integrity scan read one description of the table.
 */
export const keys = {
  entity: (collection: string, id: string) => ({ PK: `${collection}#${id}`, SK: 'META' }),
  /**
   * A unique value's marker. All values of one field share a partition, sorted by value, so the markers double as
   * an index in that field's order.
   */
  unique: (collection: string, field: string, value: string) => ({
    PK: `${PREFIXES.unique}${collection}#${field}`,
    SK: value,
  }),
  /**
   * One small item per entity in a type's id partition: the id order without reading whole entities, and the
   * entity's filter record (`filter-records.ts`).
   */
  idOrder: (collection: string, id: string) => ({ PK: `${PREFIXES.idOrder}${collection}`, SK: id }),
  /** One of a type's counter shards; concurrent writers pick different shards so they rarely conflict. */
  counter: (collection: string, shard: number) => ({ PK: `${PREFIXES.counter}${collection}`, SK: `SHARD#${shard}` }),
  typeIndex: (collection: string) => `TYPE#${collection}`,
  parentIndex: (collection: string, id: string) => `${collection}#${id}`,
  /**
   * The partition of an identity's API sessions, apart from its other children: sessions come and go by the
   * hundred (every login) and must not weigh on reading an identity's authenticators and enrollments.
   */
  sessionsIndex: (identityId: string) => `identities#${identityId}#api-sessions`,
  /** One item per entity holding a role attribute: `ROLE#<collection>#<attribute>` / `<id>`. */
  roleMember: (collection: string, attribute: string, id: string) => ({
    PK: `${PREFIXES.roleMember}${collection}#${attribute}`,
    SK: id,
  }),
  /**
   * A policy's selection of entities by one role (`#attribute`, `@id`, `#all`): `SELECT#<collection>#<role>` /
   * `<policy collection>#<policy id>`. The policies selecting an entity are the items of its roles' partitions.
   */
  selection: (collection: string, role: string, policyCollection: string, policyId: string) => ({
    PK: `${PREFIXES.selection}${collection}#${role}`,
    SK: `${policyCollection}#${policyId}`,
  }),
  /** One shard of a change marker (`lastChangeAt`), moved by the writes of the types that declare it. */
  changeMarker: (name: string) => ({ PK: `${PREFIXES.changeMarker}${name}`, SK: 'SHARD#0' }),
  /** The role attributes a type has ever used: `ROLES#<collection>` / `<attribute>`. */
  roleCatalog: (collection: string, attribute: string) => ({
    PK: `${PREFIXES.roleCatalog}${collection}`,
    SK: attribute,
  }),

  // Items kept beside the entities, each owned by one module (named), never written by the kit.
  /** An API session, under its token's hash (`shared/auth/api-session-store.ts`). */
  apiSession: (tokenHash: string) => ({ PK: `${PREFIXES.apiSession}${tokenHash}`, SK: 'META' }),
  /** The pointer from an API session's id to its token hash (`api-session-store.ts`). */
  apiSessionPointer: (id: string) => ({ PK: `api-sessions#${id}`, SK: 'ID' }),
  /**
   * One time bucket of recent changes for the routers' control channel endpoints to pass on
   * (`shared/store/ctrl-changes.ts`): `SESSIONCHANGES#<bucket>` / `<instant>#<id>`, gone by TTL. The prefix is the
   * one the log had when it held API session changes alone: kept, so an upgrade reads what was written before it.
   */
  ctrlChanges: (bucket: number) => `${PREFIXES.ctrlChanges}${bucket}`,
  /** An API session's posture data (`shared/posture/posture-data.ts`). */
  postureData: (apiSessionId: string) => ({ PK: `${PREFIXES.postureData}${apiSessionId}`, SK: 'DATA' }),
  /** An identity's failed service requests (`shared/posture/failed-requests.ts`). */
  failedRequests: (identityId: string) => ({ PK: `${PREFIXES.failedRequests}${identityId}`, SK: 'DATA' }),
  /** One fixed window of a rate limit, the key hashed (`shared/rate-limit/fixed-window-limiter.ts`). */
  rateWindow: (scope: string, keyDigest: string, windowStart: number) => ({
    PK: `${PREFIXES.rateWindow}${scope}#${keyDigest}`,
    SK: `W#${windowStart}`,
  }),
  /** An address that logged in as a subject before, the pair hashed (`shared/rate-limit/remembered-addresses.ts`). */
  rememberedAddress: (scope: string, pairDigest: string) => ({
    PK: `${PREFIXES.rememberedAddress}${scope}#${pairDigest}`,
    SK: 'ADDRESS',
  }),
  /**
   * A router's control channel connection (`shared/store/router-connections.ts`): which endpoint holds it, its lease,
   * and what the router said of itself. `collection` is the router's (`edge-routers` or `routers`).
   */
  ctrlChannel: (collection: string, routerId: string) => ({
    PK: `${PREFIXES.ctrlChannel}${collection}#${routerId}`,
    SK: 'CHANNEL',
  }),
  /**
   * The GSI2 partition of every router's connection item (sort key `<collection>#<router id>`): one query tells an
   * endpoint every router's presence, those held by other endpoints (and dead ones') included.
   */
  routerConnectionsIndex: () => 'ctrl-channels',
  /**
   * A link between two routers, as the router that dialed it reported it (`shared/store/link-items.ts`), under its id
   * (which a fault names); every link in GSI1 (`linksIndex`), read whole as the link graph.
   */
  link: (linkId: string) => ({ PK: `${PREFIXES.link}${linkId}`, SK: 'LINK' }),
  linksIndex: () => 'TYPE#links',
  /**
   * A circuit an SDK dialed through a router (`shared/store/circuit-items.ts`), under its id, which is all a router's
   * fault names; listed under its Dial session in GSI2 (`sessionCircuitsIndex`).
   */
  circuit: (circuitId: string) => ({ PK: `${PREFIXES.circuit}${circuitId}`, SK: 'CIRCUIT' }),
  /**
   * A control channel endpoint process (an ECS task) and where the others reach it to relay messages to the routers
   * it holds (`shared/store/endpoint-items.ts`), under its id, which routers' connection items name.
   */
  endpoint: (endpointId: string) => ({ PK: `${PREFIXES.endpoint}${endpointId}`, SK: 'ENDPOINT' }),
  /**
   * The OIDC provider's short-lived state (`shared/store/oidc-items.ts`): an auth request by its id, a code by its
   * hash; each gone by TTL.
   */
  oidc: (kind: 'auth' | 'code', id: string) => ({ PK: `${PREFIXES.oidc}${kind}#${id}`, SK: 'OIDC' }),
  sessionCircuitsIndex: (sessionId: string) => `sessions#${sessionId}#circuits`,
  /**
   * Every circuit, in id order (GSI1 partition `circuits`, sort key the circuit's id): what the fabric API lists. One
   * partition, as the reference keeps one circuit table: circuits are made at the routers' pace, far under what one
   * index partition takes.
   */
  circuitsIndex: 'circuits',
  /** The controller's singletons: the network CA, the server certificate and its ACM import, the default admin. */
  system: (name: SystemItem) => ({ PK: `${PREFIXES.system}${name}`, SK: 'SYSTEM' }),
  /** The integrity run's status and lock, and the last snapshot (`shared/integrity/integrity-run.ts`). */
  integrity: (name: 'status' | 'snapshot') => ({
    PK: `${PREFIXES.integrity}${name}`,
    SK: name === 'status' ? 'STATUS' : 'LAST',
  }),
  /** The partition of one integrity run's findings. */
  integrityFindings: (runId: string) => `${PREFIXES.integrity}run#${runId}`,
} as const;

/** The controller's singleton items (`keys.system`). */
export type SystemItem =
  | 'network-ca'
  | 'server-certificate'
  | 'server-certificate-import'
  | 'default-admin'
  | 'ended-sessions-sweep';

/**
 * The partition-key prefixes of every item kind the table holds, but entities and reference links (whose partition
 * is their entity's): the one list the integrity scan reads an item's kind from.
 */
export const PREFIXES = {
  unique: 'UNIQUE#',
  idOrder: 'IDS#',
  /**
   * Filter packs (`FILTERS#<collection>` / `<bucket>`), which held many filter records to an item until records moved
   * to the id-order items alone: no longer written or read, and removed by the integrity fix where a table has them.
   */
  retiredFilterPack: 'FILTERS#',
  counter: 'COUNT#',
  roleMember: 'ROLE#',
  roleCatalog: 'ROLES#',
  selection: 'SELECT#',
  changeMarker: 'CHANGED#',
  apiSession: 'APISESSION#',
  ctrlChanges: 'SESSIONCHANGES#',
  postureData: 'POSTURE#',
  failedRequests: 'FAILED-SESSIONS#',
  rateWindow: 'RATE#',
  rememberedAddress: 'REMEMBERED#',
  ctrlChannel: 'CTRL#',
  circuit: 'CIRCUIT#',
  link: 'LINK#',
  endpoint: 'ENDPOINT#',
  oidc: 'OIDC#',
  system: 'SYSTEM#',
  integrity: 'INTEGRITY#',
} as const;

export type ItemKind = keyof typeof PREFIXES | 'entity-or-link';

/**
 * The kind of an item, from its partition key: one of {@link PREFIXES}, else an entity's partition (its item, its
 * reference links, its pointer). Note `ROLES#` is tested before `ROLE#`.
 */
export function itemKindOf(pk: string): ItemKind {
  const ordered = (Object.entries(PREFIXES) as [keyof typeof PREFIXES, string][]).sort(
    ([, a], [, b]) => b.length - a.length,
  );
  return ordered.find(([, prefix]) => pk.startsWith(prefix))?.[0] ?? 'entity-or-link';
}

/**
 * The longest value (ids, unique values, role attributes) that fits a key with its prefix: DynamoDB refuses sort keys
 * over 1,024 bytes and partition keys over 2,048. Nothing longer is ever stored, so a longer value matches nothing and
 * must not reach DynamoDB, which would answer with a validation error. Neither may an empty value.
 */
export const MAX_KEY_VALUE_BYTES = 1000;

export function fitsKey(value: string): boolean {
  // DynamoDB refuses empty key values too: an empty id or unique value names nothing.
  return value !== '' && Buffer.byteLength(value, 'utf8') <= MAX_KEY_VALUE_BYTES;
}

/** How many shards a type's entity counter is spread over. */
export const COUNTER_SHARDS = 8;

/** The index attributes a document's item may carry (`documentIndexKeys`). */
export const DOCUMENT_INDEX_KEYS = ['GSI1PK', 'GSI1SK', 'GSI2PK', 'GSI2SK'] as const;

/** The attributes that belong to the table's layout, not to the stored document. */
const LAYOUT_ATTRIBUTES: ReadonlySet<string> = new Set([
  'PK',
  'SK',
  ...DOCUMENT_INDEX_KEYS,
  'version',
  'expiresAtEpoch',
  // An identity's own change marker, on its item (`change-markers.ts`): what polls read, not the identity's document.
  'changedAt',
]);

/**
 * The key of the one-attribute map that holds a document's structured field (a map, an object, a list) as JSON text.
 * Maps are the caller's data: stored as DynamoDB maps their keys would be attribute names, and DynamoDB refuses an
 * empty one while the SDK's marshaller trips over a key named `constructor`. As text, every key is just data, and a
 * field still reads back whole in one attribute.
 */
const JSON_ATTRIBUTE = '$json';

function isEncoded(value: unknown): value is { [JSON_ATTRIBUTE]: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const own = Object.keys(value);
  return (
    own.length === 1 &&
    own[0] === JSON_ATTRIBUTE &&
    typeof (value as Record<string, unknown>)[JSON_ATTRIBUTE] === 'string'
  );
}

/**
 * A document's attributes as stored: scalars as they are, structured fields (maps, objects, lists) as JSON text, so
 * nothing the caller sent becomes a DynamoDB attribute name. Null-valued fields are kept (they read back as null).
 */
export function storedAttributes(doc: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(doc)) {
    attributes[key] = typeof value === 'object' && value !== null ? { [JSON_ATTRIBUTE]: JSON.stringify(value) } : value;
  }
  return attributes;
}

/**
 * A stored item without its layout attributes, structured fields decoded: the document its schema parses. Items
 * written before structured fields were kept as text (and items written outside the kit) read as they are.
 */
export function documentOf(item: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(item)) {
    if (LAYOUT_ATTRIBUTES.has(key)) continue;
    doc[key] = isEncoded(value) ? JSON.parse(value[JSON_ATTRIBUTE]) : value;
  }
  return doc;
}

/** The approximate size of an item as DynamoDB counts it (names and values in UTF-8), for refusing oversized writes. */
export function itemBytes(item: Readonly<Record<string, unknown>>): number {
  return Buffer.byteLength(JSON.stringify(item), 'utf8');
}
