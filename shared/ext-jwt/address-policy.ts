import { BlockList, isIP } from 'node:net';

type Family = 'ipv4' | 'ipv6';

/**
 * Where a JWKS endpoint may not lead when the controller runs beside things an admin must not reach through it: the
 * Lambda runtime API and other local listeners (loopback), the instance metadata service (link-local 169.254.169.254,
 * fd00:ec2::254 in fc00::/7), the VPC and anything peered or tunnelled to it (private). IPv4-mapped IPv6 forms
 * (`::ffff:127.0.0.1`) are matched by the IPv4 ranges, as BlockList maps them.
 */
const NON_PUBLIC_RANGES: readonly (readonly [kind: string, network: string, prefix: number, family: Family])[] = [
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['loopback', '::1', 128, 'ipv6'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['private', 'fc00::', 7, 'ipv6'],
  // 0.0.0.0/8 rather than only 0.0.0.0: Linux connects any 0.x.y.z to the host itself.
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
];

const rangesByKind = new Map<string, BlockList>();
for (const [kind, network, prefix, family] of NON_PUBLIC_RANGES) {
  const list = rangesByKind.get(kind) ?? new BlockList();
  list.addSubnet(network, prefix, family);
  rangesByKind.set(kind, list);
}

/** The kind of non-public range (`loopback`, `link-local`, `private`, `unspecified`) an IP address is in, if any. */
function nonPublicRangeOf(address: string, family: Family): string | undefined {
  for (const [kind, list] of rangesByKind) if (list.check(address, family)) return kind;
  return undefined;
}

/**
 * Why the controller may not connect to this address for a JWKS, or undefined when it may: with private addresses
 * allowed (local runs, where identity providers often listen on loopback) every address is fine, otherwise only public
 * ones.
 */
export function addressRefusal(address: string, allowPrivateAddresses: boolean): string | undefined {
  if (allowPrivateAddresses) return undefined;
  const version = isIP(address);
  if (version === 0) return `${address} is not an IP address`;
  const kind = nonPublicRangeOf(address, version === 4 ? 'ipv4' : 'ipv6');
  return kind ? `${address} is a ${kind} address` : undefined;
}
