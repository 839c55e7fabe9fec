import type { PostureCheck } from '../entities/posture-check.ts';
import type { PostureCheckType } from '../entities/posture-check-types.ts';
import { selfLinks } from './entity-ref.ts';

/** A posture check as the API shows it: its stored fields, with the check's own counter as `version`. */
export function postureCheckView(check: PostureCheck) {
  const { checkVersion, ...fields } = check;
  return { ...fields, version: checkVersion, _links: selfLinks('posture-checks', check.id) };
}

/**
 * A posture check type. The document requires a string `version` that the reference never fills; every seeded type is
 * at its first version.
 */
export function postureCheckTypeView(type: PostureCheckType) {
  return { ...type, version: '1', _links: selfLinks('posture-check-types', type.id) };
}
