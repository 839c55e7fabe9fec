import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';

/** The id of the settings every controller inherits; a controller's own settings are kept under its id. */
export const GLOBAL_SETTINGS_ID = 'global';

/**
 * The settings the documents define (`controllerSettings`): the OIDC redirect and post-logout URIs. A list left unset
 * in a controller's own settings is inherited from the global ones.
 */
export const settingsShape = {
  oidc: z
    .object({
      redirectUris: z.array(z.string()).optional(),
      postLogoutUris: z.array(z.string()).optional(),
    })
    .optional(),
};

export const controllerSettingSchema = z.object({ ...baseDocumentShape, ...settingsShape });
export type ControllerSetting = z.infer<typeof controllerSettingSchema>;

/** Controller settings: one entity per controller (its id) and one `global`; nothing refers to them. */
export const controllerSettings: EntityDefinition<ControllerSetting> = {
  collection: 'controller-settings',
  label: 'controller setting',
  schema: controllerSettingSchema,
  unique: [],
  filterable: BASE_FILTERABLE,
};
