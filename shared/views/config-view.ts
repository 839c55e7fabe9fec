import type { Config } from '../entities/config.ts';
import { entityRef, selfLinks } from './entity-ref.ts';

/** A config as the API shows it, with its type as an EntityRef (the caller resolves the type's name). */
export function configView(config: Config, configTypeName: string) {
  return {
    ...config,
    _links: selfLinks('configs', config.id, { services: 'services' }),
    configType: entityRef('config-types', config.configTypeId, configTypeName),
  };
}
