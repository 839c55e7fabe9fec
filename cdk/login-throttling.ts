import { DEFAULT_FIREWALL_LOGIN_RATE_LIMIT, FIREWALL_WINDOW_SECONDS } from './controller-firewall.ts';

/** API Gateway's throttle of one method: steady requests per second, and how many more may arrive at once. */
export interface Throttle {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/** The network the login throttles are sized for unless told otherwise: ten thousand devices. */
export const DEFAULT_FLEET_SIZE = 10_000;

/**
 * How long a fleet that restarts at once (a region's outage, a controller upgrade that ends every API session) may
 * take to log in again, each device once: a couple of minutes.
 */
export const FLEET_LOGIN_SECONDS = 120;

/**
 * How many source addresses, each sending logins at the web ACL's per-address limit, it takes to use up one login
 * path for everyone. The path's throttle is shared by all clients; the per-address limit is what must stop a
 * sprayer, so one address may take a twentieth of a path at most.
 */
export const ADDRESSES_TO_FILL_A_LOGIN_PATH = 20;

/** What sizes the login paths' throttles: the fleet, or explicit limits that win over it. */
export interface LoginThrottleSettings {
  /** How many devices (identities and routers) log in; {@link DEFAULT_FLEET_SIZE} unless set. */
  readonly fleetSize?: number;
  /** Requests per second each login path serves, all clients together; derived from the fleet unless set. */
  readonly loginRateLimit?: number;
  /** Requests each login path serves at once above that rate; twice the rate unless set. */
  readonly loginBurstLimit?: number;
}

/**
 * The throttle of each login and enrollment method (API Gateway method settings). A fleet restarting at once logs in
 * within {@link FLEET_LOGIN_SECONDS}, every device on the same path (the fleet's SDKs all call the same one), so the
 * rate is the fleet over that time; and never below what {@link ADDRESSES_TO_FILL_A_LOGIN_PATH} addresses at the web
 * ACL's per-address limit send, so that the per-address limit is the one a single source meets. The burst is twice
 * the rate: the first second of a restart takes that many at once, the rest are answered 429 and come back.
 */
export function loginThrottling(
  settings: LoginThrottleSettings = {},
  firewallLoginRateLimit = DEFAULT_FIREWALL_LOGIN_RATE_LIMIT,
): Throttle {
  const fleetRate = Math.ceil((settings.fleetSize ?? DEFAULT_FLEET_SIZE) / FLEET_LOGIN_SECONDS);
  const addressesRate = Math.ceil((ADDRESSES_TO_FILL_A_LOGIN_PATH * firewallLoginRateLimit) / FIREWALL_WINDOW_SECONDS);
  const rateLimit = settings.loginRateLimit ?? Math.max(fleetRate, addressesRate);
  return { rateLimit, burstLimit: settings.loginBurstLimit ?? 2 * rateLimit };
}
