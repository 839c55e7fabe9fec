/**
 * How each kind of read the store makes sees the table: the one place the choice is made (every `ConsistentRead` the
 * store sends comes from {@link readOptions}).
 *
 * - `strong` sees every write acknowledged before it, at twice the read units.
 * - `eventual` may miss a write of the last moment (on AWS typically well under a second), at half the units.
 *
 * A read is strong only where it must see the write before it: a read whose answer conditions a write (versions,
 * uniqueness, the links a delete checks, read-modify-write of singletons and catalogs), a read an access decision
 * rests on, and a point read a client makes of what it has just written (a create answered 201 must read back, the
 * way Terraform and the CLI read right after they write). Everything that pages or counts a whole type for a list is
 * eventual: a list already shows the table as of some moment, and its entries are read by key afterwards. Each strong
 * kind has a test that fails if it were made eventual (`test/api/read-consistency.test.ts`). Global secondary indexes
 * are always eventual (DynamoDB offers nothing else there), so they are not listed.
 */
export type Consistency = 'strong' | 'eventual';

export const READS = {
  /** An entity by id (GET, and the read before every update and delete: its version conditions the write). */
  entity: 'strong',
  /** A unique value's marker: lookups a login, an enrollment or a write rests on (a just-made token, a name). */
  uniqueMarker: 'strong',
  /** The links to an entity: a delete must see every link written before its mark (`delete-entity.ts`). */
  references: 'strong',
  /** The entities linking to one (configs of a config type): what a write fans its change out to. */
  referrers: 'strong',
  /** Whether a role attribute still has a holder: a catalog entry is removed on this answer. */
  roleHolder: 'strong',
  /** Policy selections, role members and ids a reach answer (an access decision) reads: a revoked grant stops now. */
  policyReach: 'strong',
  /** The policies naming an entity by `@id`, which its delete rewrites. */
  namingPolicies: 'strong',
  /**
   * An API session by its token or id, and what it stands on: a logout, a disable or a lockout must stop the very next
   * request that changes anything (every write, every admin request), and whatever the eventual read below would
   * refuse is read again this way before it is refused.
   */
  apiSession: 'strong',
  /** Singletons (network CA, server certificate, default admin), read before they are written. */
  systemItem: 'strong',
  /** Items kept per owner outside the kit, written back under the version read. */
  versionedItem: 'strong',
  /** The integrity run's status, which is also its lock. */
  integrityStatus: 'strong',
  /** The integrity scan and snapshots: a page is compared with point reads made after it. */
  tableScan: 'strong',
  /** Counter shards summed by the integrity run, which moves them by the difference. */
  counterReconcile: 'strong',
  /** Items read by key in batches for the integrity scan and other checks. */
  itemsByKey: 'strong',

  /** A page of a type's ids in id or unique-field order (an unfiltered list), and skipping an offset. */
  listOrder: 'eventual',
  /** A type's total (a list's `meta.pagination.totalCount`). */
  listCount: 'eventual',
  /** Every filter record of a type (a list whose filter pins nothing) or some by key. */
  filterRecords: 'eventual',
  /** The holders of a role attribute, for a list's `roleFilter`. */
  roleFilter: 'eventual',
  /** The role attributes in use (role-attribute lists). */
  roleCatalog: 'eventual',
  /** The entities of a list page, read by key after their ids. */
  listPage: 'eventual',
  /**
   * What a client's service list and session create read of what admins write (policies and their selections,
   * services, configs, edge routers, posture checks): a client never reads its own write there, and a grant or a
   * revocation reaches it within about a second, as it reaches routers in the reference. The caller's own identity,
   * API session, sessions and posture data are not read this way.
   */
  clientGrants: 'eventual',
  /**
   * Whether an address logged in as a subject before (a throttle's lane): missing a login of the last moment only
   * leaves that address in the ordinary lanes once more.
   */
  rememberedAddress: 'eventual',
  /**
   * The caller of a request that changes nothing and needs no admin (an SDK's poll, its session refresh, its service
   * list): its API session, identity and what the operation reads beside them, first read this way. A session ended
   * or an identity disabled a moment ago may be answered one more read (on AWS, well under a second, as a revocation
   * reaches routers in the reference); a read that would refuse the request (a session not found, as one a login has
   * just created, expired, revoked, or still partial) is not trusted and is read again strongly (`apiSession`).
   */
  callerOfRead: 'eventual',
  /**
   * Routers' control channel connections, shown in router views: a connection is a state of some moment (its lease
   * runs for tens of seconds), which a view a moment late shows as truly as a strong read.
   */
  ctrlChannel: 'eventual',
  /**
   * A link or a circuit the fabric API shows by id: a state of the network at some moment, written by the endpoint
   * tasks, never by the admin reading it, so a view a moment late is as true as a strong read.
   */
  fabricState: 'eventual',
  /**
   * The recent changes a control channel endpoint polls for its routers: each poll reads the seconds
   * before the last one's instant again, so a change one read missed is in the next.
   */
  ctrlChanges: 'eventual',
  /**
   * Every router's connection, read by an endpoint from their index (which no read can see strongly) every few
   * seconds: what it misses now, the next read or the change log tells it.
   */
  routerPresence: 'eventual',
  /**
   * A link by id: what a router's report, fault or measurement is checked against before the conditional write it
   * decides (the write's condition guards the rest), and what a notice names, read again to follow the change.
   */
  link: 'strong',
  /**
   * Where another endpoint process listens for relayed messages, read when this one first relays to it: it registers
   * before it accepts routers, so a router's connection naming it is never older than its item.
   */
  endpoint: 'strong',
  /** Every link, from their index (which no read can see strongly): an endpoint's graph, the fabric API's list. */
  links: 'eventual',
} as const satisfies Record<string, Consistency>;

export type ReadKind = keyof typeof READS;

/** The request parameter a read of `kind` sends. */
export function readOptions(kind: ReadKind): { ConsistentRead: boolean } {
  return { ConsistentRead: READS[kind] === 'strong' };
}
