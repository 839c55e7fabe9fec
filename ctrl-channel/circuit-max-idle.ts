import type { CircuitRecord } from '#shared/store/circuit-items.ts';
import type { ServiceSettings } from './service-settings.ts';

const NANOS_PER_MILLI = 1_000_000;

/**
 * Why a circuit a router confirmed idle is to be removed, or undefined to keep it, as the reference's
 * `checkCircuitMaxIdle` decides:
 *
 * - its service is gone: removed, whatever its idle time;
 * - the router named no idle time for it, or its service sets no limit (0), or the time is below the limit: kept;
 * - the reporter is a transit router: kept. Only the circuit's ends (ingress, egress) see its payload, so only they
 *   know it idle; a transit router's confirmation proves nothing of the ends.
 *
 * Routers confirm circuits idle for a minute or more, once a minute (`forwarder.idleCircuitTimeout`,
 * `idleTxInterval`), so a limit takes effect one to two minutes late with their defaults.
 */
export function idleTooLong(
  circuit: Pick<CircuitRecord, 'path'>,
  reporterId: string,
  service: ServiceSettings | undefined,
  idleNanos: number | undefined,
): string | undefined {
  if (!service) return 'its service is gone';
  if (idleNanos === undefined || service.maxIdleTimeMillis <= 0) return undefined;
  if (idleNanos < service.maxIdleTimeMillis * NANOS_PER_MILLI) return undefined;
  if (!isEndpointRouter(circuit, reporterId)) return undefined;
  return `idle ${Math.floor(idleNanos / NANOS_PER_MILLI)} ms, its service allows ${service.maxIdleTimeMillis} ms`;
}

/** The circuit's first router (where its dialer is) or last (where its terminator is). */
export const isEndpointRouter = (circuit: Pick<CircuitRecord, 'path'>, routerId: string): boolean =>
  circuit.path[0] === routerId || circuit.path.at(-1) === routerId;
