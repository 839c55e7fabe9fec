import { BlockList, isIP } from 'node:net';

/** The most names a router's server certificate may carry (a router has a few listeners' names, not hundreds). */
const MAX_SERVER_NAMES = 32;

/** A host name: letters, digits, hyphens and dots, labels of 1–63 characters, no wildcard. */
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/**
 * Addresses no router listens on for its clients: unspecified, link-local (the cloud metadata service at
 * 169.254.169.254 among them), multicast and broadcast. Loopback and private addresses stay allowed: a router may
 * listen on them (a lab, a private network).
 */
const NEVER_A_ROUTER = new BlockList();
NEVER_A_ROUTER.addSubnet('0.0.0.0', 8, 'ipv4');
NEVER_A_ROUTER.addSubnet('169.254.0.0', 16, 'ipv4');
NEVER_A_ROUTER.addSubnet('224.0.0.0', 4, 'ipv4');
NEVER_A_ROUTER.addAddress('255.255.255.255', 'ipv4');
NEVER_A_ROUTER.addAddress('::', 'ipv6');
NEVER_A_ROUTER.addSubnet('fe80::', 10, 'ipv6');
NEVER_A_ROUTER.addSubnet('ff00::', 8, 'ipv6');
NEVER_A_ROUTER.addAddress('fd00:ec2::254', 'ipv6');

/** The IPv4 address an IPv4-mapped IPv6 address stands for, so the IPv4 rules apply to it too. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/**
 * Why a router's server CSR may not have these subject alternative names, or undefined when it may: only DNS names
 * (no wildcard) and IP addresses a router can listen on, at most {@link MAX_SERVER_NAMES}. A server certificate for
 * `*.example.com` or `169.254.169.254` would let the router impersonate what it is not.
 */
export function serverNamesProblem(names: readonly { type: string; value: string }[]): string | undefined {
  if (names.length > MAX_SERVER_NAMES) return `a router's server certificate takes at most ${MAX_SERVER_NAMES} names`;
  for (const name of names) {
    if (name.type === 'dns') {
      if (!HOST_NAME.test(name.value)) return `the server name '${name.value}' is not a host name (no wildcards)`;
    } else if (name.type === 'ip') {
      if (isIP(name.value) === 0) return `the server address '${name.value}' is not an IP address`;
      const { address, family } = unmapped(name.value);
      if (NEVER_A_ROUTER.check(address, family)) {
        return `the server address '${name.value}' is not one a router listens on (link-local, metadata, unspecified or multicast)`;
      }
    } else {
      return `a router's server certificate names only host names and IP addresses, not ${name.type}`;
    }
  }
  return undefined;
}
