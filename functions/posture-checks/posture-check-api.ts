import * as z from 'zod';
import { entityApi, type Fields } from '#shared/crud/entity-api.ts';
import { variantBodyShape } from '#shared/crud/variants.ts';
import {
  NO_TIMEOUT,
  POSTURE_CHECK_TYPE_IDS,
  type PostureCheck,
  type PostureCheckTypeId,
  postureChecks,
} from '#shared/entities/posture-check.ts';
import { nameField, roleAttributesField, tagsField } from '#shared/schemas/common-fields.ts';
import { postureCheckView } from '#shared/views/posture-check-view.ts';
import { checkTypes, refuseRepeats } from './posture-check-fields.ts';

const typeId = z.enum(POSTURE_CHECK_TYPE_IDS);
const commonShape = {
  roleAttributes: roleAttributesField.optional(),
  tags: tagsField.optional(),
  ...variantBodyShape(checkTypes),
};
const createSchema = z.object({ name: nameField, typeId, ...commonShape });
// The type of a check is fixed at create: a replace may name it (it must be the stored one), a patch must.
const replaceSchema = z.object({ name: nameField, typeId: typeId.optional(), ...commonShape });
const patchSchema = z.object({ name: nameField.optional(), typeId, ...commonShape });

/** A check's own fields by its type, from a body whose type fields the kit checked (`checkTypes`). */
function typeFieldsOf(type: PostureCheckTypeId, input: z.infer<typeof replaceSchema>) {
  switch (type) {
    case 'DOMAIN':
      return { domains: input.domains };
    case 'MAC':
      return { macAddresses: [...new Set(input.macAddresses)] };
    case 'OS':
      refuseRepeats('operatingSystems', input.operatingSystems!, (os) => os.type);
      return { operatingSystems: input.operatingSystems!.map((os) => ({ ...os, versions: os.versions ?? [] })) };
    case 'PROCESS': {
      const process = input.process!;
      return {
        process: { ...process, hashes: process.hashes ?? [], signerFingerprint: process.signerFingerprint ?? '' },
      };
    }
    case 'PROCESS_MULTI':
      refuseRepeats('processes', input.processes!, (process) => `${process.osType} ${process.path}`);
      return {
        semantic: input.semantic,
        processes: input.processes!.map((p) => ({
          ...p,
          hashes: p.hashes ?? [],
          signerFingerprints: p.signerFingerprints ?? [],
        })),
      };
    case 'MFA':
      return {
        // A timeout not above 0 is none, as the reference stores it.
        timeoutSeconds: input.timeoutSeconds && input.timeoutSeconds > 0 ? input.timeoutSeconds : NO_TIMEOUT,
        promptOnWake: input.promptOnWake ?? false,
        promptOnUnlock: input.promptOnUnlock ?? false,
        ignoreLegacyEndpoints: input.ignoreLegacyEndpoints ?? false,
      };
  }
}

/** A check's stored fields: the common ones, its type's own, and its `version`. */
function checkOf(type: PostureCheckTypeId, input: z.infer<typeof replaceSchema>, checkVersion: number) {
  const { name, roleAttributes } = input;
  return { name, roleAttributes: roleAttributes ?? [], typeId: type, checkVersion, ...typeFieldsOf(type, input) };
}

/** Posture checks: one type of check each, fixed at create; every change counts the check's `version` up. */
export const postureCheckApi = entityApi({
  def: postureChecks,
  createSchema,
  replaceSchema,
  patchSchema,
  variants: checkTypes,
  roleFilter: true,
  create: (input) => ({ doc: checkOf(input.typeId, input, 1) as Fields<PostureCheck> }),
  replace: (before, input) => checkOf(before.typeId, input, before.checkVersion + 1) as Partial<PostureCheck>,
  view: (_deps, doc) => postureCheckView(doc),
});
