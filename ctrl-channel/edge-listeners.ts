import type { RouterListeners } from '#shared/store/router-connections.ts';

/** An address of a router's edge listener, as its ClientHello carries it (`edge.Address`). */
interface ListenerAddress {
  readonly value: string;
  readonly protocol: string;
  readonly hostname: string;
  readonly port: number;
}

/** The ClientHello (20001) fields this controller reads, as `decodeBody` hands them over (absent ones at defaults). */
export interface ClientHello {
  readonly version: string;
  readonly hostname: string;
  readonly protocols: readonly string[];
  readonly protocolPorts: readonly string[];
  readonly listeners: readonly {
    readonly address?: ListenerAddress | null;
    readonly advertise?: ListenerAddress | null;
  }[];
}

/**
 * How much of a ClientHello is kept: a router has a listener or two (tls, wss), so a few dozen bytes a protocol. A
 * hostile router's megabytes stay out of its connection item (read by every session answer naming it): listeners past
 * the first few are not read, and a name that is no host name or protocol, or longer than one, is left out.
 */
export const MAX_LISTENERS = 16;
const MAX_HOSTNAME_LENGTH = 253;
/** A URL scheme (`tls`, `wss`, `transwarp`): what an SDK's dialer is picked by. */
const PROTOCOL = /^[a-z][a-z0-9+.-]{0,31}$/;
/** A DNS name or an IP address (IPv6 in brackets or bare): nothing that would change a URL's meaning (`/`, `@`, `?`). */
const HOSTNAME = /^[A-Za-z0-9._:[\]-]+$/;

function isHostname(value: string): boolean {
  return value.length > 0 && value.length <= MAX_HOSTNAME_LENGTH && HOSTNAME.test(value);
}

function isPort(value: number): boolean {
  return Number.isInteger(value) && value > 0 && value <= 65_535;
}

/**
 * Where SDKs reach a router, as the reference reads its ClientHello (`sync_instant.go` `ReceiveClientHello`): each
 * edge listener's advertised address as `<protocol>://<hostname>:<port>` by protocol (a later listener of a protocol
 * replacing an earlier one); a router older than 0.26.4, which reports no listeners, by its host name and its
 * `protocols` and `protocolPorts` side by side. What is no protocol, host name or port is left out (`MAX_LISTENERS`).
 */
export function listenersOf(hello: ClientHello): RouterListeners {
  const hostname = isHostname(hello.hostname) ? hello.hostname : '';
  const protocols = new Map<string, string>();
  const add = (protocol: string, host: string, port: number) => {
    if (PROTOCOL.test(protocol) && isHostname(host) && isPort(port))
      protocols.set(protocol, `${protocol}://${host}:${port}`);
  };
  if (hello.listeners.length > 0) {
    for (const { advertise } of hello.listeners.slice(0, MAX_LISTENERS)) {
      if (advertise) add(advertise.protocol, advertise.hostname, advertise.port);
    }
  } else if (hostname !== '') {
    hello.protocols.slice(0, MAX_LISTENERS).forEach((protocol, index) => {
      const port = hello.protocolPorts[index];
      if (port !== undefined && /^\d{1,5}$/.test(port)) add(protocol, hostname, Number(port));
    });
  }
  return { hostname, supportedProtocols: Object.fromEntries(protocols) };
}
