import { isIP } from 'node:net';
import { addressKindOf, describeKind } from '../net/address-kind.ts';

/**
 * Why the controller may not connect to this address for a JWKS, or undefined when it may: with private addresses
 * allowed (local runs, where identity providers often listen on loopback) every address is fine, otherwise only
 * ordinary public ones. Every other kind (`shared/net/address-kind.ts`) is refused, because the controller runs
 * beside things an admin must not reach through it: the Lambda runtime API and other local listeners (loopback), the
 * instance metadata service, the VPC and whatever is peered, tunnelled or translated to it (private, carrier-grade NAT,
 * site-local, NAT64). An IPv6 address carrying an IPv4 one is judged by the IPv4 address it is delivered to.
 */
export function addressRefusal(address: string, allowPrivateAddresses: boolean): string | undefined {
  if (allowPrivateAddresses) return undefined;
  if (isIP(address) === 0) return `${address} is not an IP address`;
  const kind = addressKindOf(address);
  return kind ? `${address} is ${describeKind(kind)}` : undefined;
}
