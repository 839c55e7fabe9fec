import type { Service } from '../entities/service.ts';
import { selfLinks } from './entity-ref.ts';

/** Config data by config type name: what a service's `config` shows of the config types asked for. */
export type ServiceConfigMap = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

/**
 * A service as the management API shows it. `permissions` and `postureQueries` come from service policies, which
 * this view does not read.
 */
export function serviceView(service: Service, config: ServiceConfigMap = {}) {
  return {
    ...service,
    _links: selfLinks('services', service.id, {
      configs: 'configs',
      'edge-routers': 'edge-routers',
      identities: 'identities',
      'service-edge-router-policies': 'service-edge-router-policies',
      'service-policies': 'service-policies',
      terminators: 'terminators',
    }),
    config,
    permissions: [],
    postureQueries: [],
  };
}
