/**
 * How a read is made: strongly consistent unless `consistent: false`. Eventually consistent reads cost half the read
 * units; they suit readers that never read a write of their own there, such as a client resolving what the policies
 * an admin wrote grant it (a write shows in every copy within about a second).
 */
export interface ReadConsistency {
  readonly consistent?: boolean;
}

/** The `ConsistentRead` of a request made with `read`. */
export function consistentRead(read: ReadConsistency): boolean {
  return read.consistent ?? true;
}
