import { isIP } from 'node:net';
import { type AddressKind, addressKindOf, canonicalHost, describeKind } from '../net/address-kind.ts';

/** The most names a router's server certificate may carry (a router has a few listeners' names, not hundreds). */
const MAX_SERVER_NAMES = 32;

/** A host name: letters, digits, hyphens and dots, labels of 1–63 characters, no wildcard. */
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/**
 * The non-public addresses a router may listen on: a lab's, a private network's, a carrier's. Every other kind
 * (`shared/net/address-kind.ts`: loopback, link-local, metadata, unspecified, multicast, ...) is no router's.
 */
const ROUTER_MAY_LISTEN_ON: ReadonlySet<AddressKind> = new Set([
  'private',
  'carrier-grade NAT',
  'benchmarking',
  'site-local',
]);

/** Names a host's own resolver answers with loopback (RFC 6761's `localhost` and below it, /etc/hosts aliases). */
const LOOPBACK_NAME = /(^|\.)localhost$|^localhost\.localdomain$|^ip6-(localhost|loopback)$/;
/** The cloud metadata services' host names (GCP, AWS). */
const METADATA_NAMES: ReadonlySet<string> = new Set([
  'metadata',
  'metadata.google.internal',
  'instance-data',
  'instance-data.ec2.internal',
]);

/** How the names are judged: `loopback`, a router beside `npm start`'s controller may name 127.0.0.1 or ::1 (as IP addresses). */
export interface ServerNameRules {
  readonly loopback?: boolean;
}

/** Whether the address is a loopback address a local router may name (`ServerNameRules.loopback`). */
function isAllowedLoopback(address: string, rules: ServerNameRules): boolean {
  return rules.loopback === true && addressKindOf(address) === 'loopback';
}

/** Why a router may not name this address, or undefined: a kind it never listens on. */
function addressProblem(quoted: string, address: string, rules: ServerNameRules): string | undefined {
  const kind = addressKindOf(address);
  if (kind === undefined || ROUTER_MAY_LISTEN_ON.has(kind) || isAllowedLoopback(address, rules)) return undefined;
  return `${quoted} is ${describeKind(kind)}, not one a router listens on`;
}

/**
 * Why a router may not name this DNS name, or undefined. It is judged as clients read it: a name that URL parsers and
 * inet_aton take for an IPv4 address (`2852039166`, `0xa9fea9fe`, `127.1`) is that address.
 */
function dnsNameProblem(value: string): string | undefined {
  const quoted = `the server name '${value}'`;
  if (!HOST_NAME.test(value)) return `${quoted} is not a host name (no wildcard, no trailing dot)`;
  const host = canonicalHost(value);
  if (host === undefined) return `${quoted} is neither a host name nor an IPv4 address`;
  // A host name that spells an address never counts as the loopback allowance's (that is for IP addresses alone).
  if (isIP(host)) return addressProblem(`${quoted} (${host})`, host, {});
  if (LOOPBACK_NAME.test(host)) return `${quoted} names the loopback interface`;
  if (METADATA_NAMES.has(host)) return `${quoted} names a cloud metadata service`;
  return undefined;
}

function ipAddressProblem(value: string, rules: ServerNameRules): string | undefined {
  const quoted = `the server address '${value}'`;
  if (isIP(value) === 0) return `${quoted} is not an IP address`;
  return addressProblem(quoted, value, rules);
}

/**
 * Why a router's server CSR may not have these subject alternative names, or undefined when it may: only DNS names
 * (no wildcard) and IP addresses a router can listen on, at most {@link MAX_SERVER_NAMES}, none of them one of
 * `controllerNames`. The signing CA's certificate for a name is trusted wherever the network CA is: SDKs trust it for
 * the controller (at its configured names, and at `localhost` locally), so a router certificate for one of those, for
 * `*.example.com` or for the metadata service would let the router impersonate what it is not. `rules.loopback`
 * (`npm start`'s controller alone) lets a router on the controller's own machine name 127.0.0.1 or ::1, which the
 * local controller answers at too: a development network on one machine.
 */
export function serverNamesProblem(
  names: readonly { type: string; value: string }[],
  controllerNames: readonly string[],
  rules: ServerNameRules = {},
): string | undefined {
  if (names.length > MAX_SERVER_NAMES) return `a router's server certificate takes at most ${MAX_SERVER_NAMES} names`;
  const controllers = new Set(controllerNames.map(canonicalHost));
  for (const name of names) {
    let problem: string | undefined;
    if (name.type === 'dns') problem = dnsNameProblem(name.value);
    else if (name.type === 'ip') problem = ipAddressProblem(name.value, rules);
    else return `a router's server certificate names only host names and IP addresses, not ${name.type}`;
    if (problem) return problem;
    // The local controller answers at 127.0.0.1 too; on its own machine a router may share that address.
    const sharedLoopback = name.type === 'ip' && isAllowedLoopback(name.value, rules);
    if (controllers.has(canonicalHost(name.value)) && !sharedLoopback) {
      return `the server name '${name.value}' is one of the controller's own names`;
    }
  }
  return undefined;
}
