import type { ConfigType } from '../entities/config-type.ts';
import { selfLinks } from './entity-ref.ts';

/** A config type as the API shows it. */
export function configTypeView(configType: ConfigType) {
  return { ...configType, _links: selfLinks('config-types', configType.id, { configs: 'configs' }) };
}
