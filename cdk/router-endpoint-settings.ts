/** The settings of the routers' control channel endpoint on AWS (docs/aws.md, "The routers' endpoint"). */
export interface RouterEndpointSettings {
  /**
   * Deploy the routers' control channel endpoint: a Network Load Balancer passing TLS through to an ECS Fargate
   * service: what routers need to come online and carry traffic. Off by default: the endpoint costs by the hour
   * whether routers connect or not, which an idle network should not pay (docs/aws.md).
   */
  readonly routerEndpoint?: boolean;
  /**
   * The name routers dial, with a Route 53 alias to the load balancer when the hosted zone is given; unset, the load
   * balancer's own DNS name. The server certificate names it either way.
   */
  readonly ctrlDomainName?: string;
  /** The port routers dial (the load balancer's listener). */
  readonly routerEndpointPort?: number;
  /** Each task's CPU units (256 = a quarter vCPU) and memory (MiB), in one of Fargate's combinations. */
  readonly routerEndpointCpu?: number;
  readonly routerEndpointMemoryMb?: number;
  /** Tasks at deploy; CPU target tracking then keeps the count between the minimum and maximum. */
  readonly routerEndpointDesiredCount?: number;
  readonly routerEndpointMinCount?: number;
  readonly routerEndpointMaxCount?: number;
}

/**
 * 443 by default: routers sit in sites whose firewalls let out HTTPS and little else, and the channel is TLS, told
 * apart by ALPN (`ziti-ctrl`) as the reference tells it from its APIs on one port. 6262, the reference's former
 * control port, is for sites that want the two apart: set it here.
 */
export const DEFAULT_ROUTER_ENDPOINT = {
  port: 443,
  cpu: 256,
  memoryMb: 512,
  // Two tasks, one in each zone: a task or a zone lost leaves the routers another to reconnect to.
  desiredCount: 2,
  minCount: 2,
  maxCount: 4,
  /** The average CPU the scaling keeps the tasks to: TLS and heartbeats, mostly idle, so spikes are reconnects. */
  targetCpuPercent: 60,
} as const;

/** The endpoint's sizing with the defaults filled in. */
export interface RouterEndpointSizing {
  readonly port: number;
  readonly cpu: number;
  readonly memoryMb: number;
  readonly desiredCount: number;
  readonly minCount: number;
  readonly maxCount: number;
}

export function routerEndpointSizingOf(settings: RouterEndpointSettings): RouterEndpointSizing {
  return {
    port: settings.routerEndpointPort ?? DEFAULT_ROUTER_ENDPOINT.port,
    cpu: settings.routerEndpointCpu ?? DEFAULT_ROUTER_ENDPOINT.cpu,
    memoryMb: settings.routerEndpointMemoryMb ?? DEFAULT_ROUTER_ENDPOINT.memoryMb,
    desiredCount: settings.routerEndpointDesiredCount ?? DEFAULT_ROUTER_ENDPOINT.desiredCount,
    minCount: settings.routerEndpointMinCount ?? DEFAULT_ROUTER_ENDPOINT.minCount,
    maxCount: settings.routerEndpointMaxCount ?? DEFAULT_ROUTER_ENDPOINT.maxCount,
  };
}

/** The settings that mean something only with the endpoint on. */
const SIZING_KEYS = [
  'ctrlDomainName',
  'routerEndpointPort',
  'routerEndpointCpu',
  'routerEndpointMemoryMb',
  'routerEndpointDesiredCount',
  'routerEndpointMinCount',
  'routerEndpointMaxCount',
] as const satisfies readonly (keyof RouterEndpointSettings)[];

/** Fargate's memory range (MiB) for each CPU size (Linux). */
const FARGATE_MEMORY: Readonly<Record<number, readonly [number, number]>> = {
  256: [512, 2048],
  512: [1024, 4096],
  1024: [2048, 8192],
  2048: [4096, 16384],
  4096: [8192, 30720],
};

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** Why the endpoint's settings cannot make a working service, or undefined when they can (or it is off). */
export function routerEndpointProblem(settings: RouterEndpointSettings): string | undefined {
  const { ctrlDomainName } = settings;
  if (settings.routerEndpoint !== true) {
    const given = SIZING_KEYS.find((key) => settings[key] !== undefined);
    return given ? `${given} needs routerEndpoint: true` : undefined;
  }
  if (ctrlDomainName !== undefined && !HOST_NAME.test(ctrlDomainName)) {
    return `ctrlDomainName must be a lower-case DNS name, got ${JSON.stringify(ctrlDomainName)}`;
  }
  const sizing = routerEndpointSizingOf(settings);
  const integers = Object.entries(sizing).find(([, value]) => !Number.isInteger(value) || value < 1);
  if (integers) return `routerEndpoint ${integers[0]} must be a positive integer, got ${integers[1]}`;
  if (sizing.port > 65_535) return `routerEndpointPort must be at most 65535, got ${sizing.port}`;
  const memory = FARGATE_MEMORY[sizing.cpu];
  if (!memory) return `routerEndpointCpu must be one of ${Object.keys(FARGATE_MEMORY).join(', ')}, got ${sizing.cpu}`;
  // A quarter vCPU takes 512 MiB too; every other size whole GiB.
  const step = sizing.memoryMb === 512 ? 512 : 1024;
  if (sizing.memoryMb < memory[0] || sizing.memoryMb > memory[1] || sizing.memoryMb % step !== 0) {
    return `routerEndpointMemoryMb must be whole GiB from ${memory[0]} to ${memory[1]} with ${sizing.cpu} CPU units, got ${sizing.memoryMb}`;
  }
  if (sizing.minCount > sizing.desiredCount || sizing.desiredCount > sizing.maxCount) {
    return `the router endpoint's task counts must be min <= desired <= max, got ${sizing.minCount}, ${sizing.desiredCount}, ${sizing.maxCount}`;
  }
  return undefined;
}
