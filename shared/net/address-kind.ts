import { BlockList, isIP } from 'node:net';

/** A kind of address that is not an ordinary public unicast one. */
export type AddressKind =
  | 'metadata'
  | 'unspecified'
  | 'loopback'
  | 'link-local'
  | 'private'
  | 'carrier-grade NAT'
  | 'benchmarking'
  | 'site-local'
  | 'IPv4-compatible'
  | 'local-use NAT64'
  | 'multicast'
  | 'reserved';

type Family = 'ipv4' | 'ipv6';

/**
 * The ranges of each kind, the first match naming an address's kind: the cloud metadata services (169.254.169.254,
 * AWS's fd00:ec2::254) before the link-local and private ranges they sit in, so that a rule allowing private
 * addresses still refuses them.
 */
const RANGES: readonly (readonly [kind: AddressKind, network: string, prefix: number, family: Family])[] = [
  ['metadata', '169.254.169.254', 32, 'ipv4'],
  ['metadata', 'fd00:ec2::254', 128, 'ipv6'],
  // 0.0.0.0/8 rather than only 0.0.0.0: Linux connects any 0.x.y.z to the host itself.
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['loopback', '::1', 128, 'ipv6'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['private', 'fc00::', 7, 'ipv6'],
  ['carrier-grade NAT', '100.64.0.0', 10, 'ipv4'],
  ['benchmarking', '198.18.0.0', 15, 'ipv4'],
  ['site-local', 'fec0::', 10, 'ipv6'],
  // Deprecated (RFC 4291): no host is reached at ::a.b.c.d, and stacks that still honour it tunnel to a.b.c.d.
  ['IPv4-compatible', '::', 96, 'ipv6'],
  // A network's own NAT64 prefix (RFC 8215): where its IPv4 address sits depends on that network's prefix length.
  ['local-use NAT64', '64:ff9b:1::', 48, 'ipv6'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['multicast', 'ff00::', 8, 'ipv6'],
  // 240.0.0.0/4, the limited broadcast address 255.255.255.255 among them.
  ['reserved', '240.0.0.0', 4, 'ipv4'],
];

const rangesByKind = new Map<AddressKind, BlockList>();
for (const [kind, network, prefix, family] of RANGES) {
  const list = rangesByKind.get(kind) ?? new BlockList();
  list.addSubnet(network, prefix, family);
  rangesByKind.set(kind, list);
}

/**
 * IPv6 prefixes whose last 32 bits are an IPv4 address the packets go to: IPv4-mapped (::ffff:0:0/96, how dual-stack
 * sockets write IPv4 peers), IPv4-translated (::ffff:0:0:0/96, SIIT) and the well-known NAT64 prefix (64:ff9b::/96).
 */
const EMBEDDING_IPV4 = new BlockList();
EMBEDDING_IPV4.addSubnet('::ffff:0:0', 96, 'ipv6');
EMBEDDING_IPV4.addSubnet('::ffff:0:0:0', 96, 'ipv6');
EMBEDDING_IPV4.addSubnet('64:ff9b::', 96, 'ipv6');

/** The eight 16-bit groups of an IPv6 address in WHATWG's canonical form (lowercase hex, no dotted tail). */
function ipv6Groups(canonical: string): number[] {
  const [head = '', tail] = canonical.split('::');
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const first = groupsOf(head);
  if (tail === undefined) return first;
  const last = groupsOf(tail);
  return [...first, ...new Array<number>(8 - first.length - last.length).fill(0), ...last];
}

/** The IPv4 address an IPv6 one carries and is delivered to (mapped, translated, NAT64), if it carries one. */
function embeddedIpv4(canonical: string): string | undefined {
  if (!EMBEDDING_IPV4.check(canonical, 'ipv6')) return undefined;
  const groups = ipv6Groups(canonical);
  const high = groups[6] ?? 0;
  const low = groups[7] ?? 0;
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * A host as WHATWG URL parsing reads it, which is how browsers, Node's HTTP clients and inet_aton-style resolvers
 * reach it: lowercase, an IPv4 address in any of its numeric spellings (`2852039166`, `0xa9fea9fe`,
 * `0251.0376.0251.0376`, `169.254.43518`) as a dotted quad, an IPv6 address in its canonical form without brackets,
 * one trailing dot dropped. Undefined for what no URL can name as a host (`router.123`: a numeric last label that is
 * no IPv4 address) and for anything but letters, digits, dots, hyphens and underscores outside an IPv6 literal.
 */
export function canonicalHost(host: string): string | undefined {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const ipv6 = isIP(bare) === 6;
  if (!ipv6 && !/^[a-z0-9._-]+$/i.test(bare)) return undefined;
  let hostname: string;
  try {
    hostname = new URL(`http://${ipv6 ? `[${bare}]` : bare}/`).hostname;
  } catch {
    return undefined;
  }
  if (ipv6) return hostname.slice(1, -1);
  return hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
}

/**
 * The kind of an IP address (any spelling {@link canonicalHost} reads), or undefined when it is an ordinary public
 * unicast address (or no IP address at all). An IPv6 address carrying an IPv4 one it is delivered to is judged by that
 * IPv4 address: `::ffff:169.254.169.254` and `64:ff9b::a9fe:a9fe` are the metadata service.
 */
export function addressKindOf(address: string): AddressKind | undefined {
  const canonical = canonicalHost(address);
  if (canonical === undefined) return undefined;
  const version = isIP(canonical);
  if (version === 0) return undefined;
  const embedded = version === 6 ? embeddedIpv4(canonical) : undefined;
  const [judged, family]: [string, Family] = embedded
    ? [embedded, 'ipv4']
    : [canonical, version === 4 ? 'ipv4' : 'ipv6'];
  for (const [kind, list] of rangesByKind) if (list.check(judged, family)) return kind;
  return undefined;
}

/** A kind as a phrase: "a loopback address", "an unspecified address". */
export function describeKind(kind: AddressKind): string {
  return `${/^[aeiouI]/.test(kind) ? 'an' : 'a'} ${kind} address`;
}
