import * as z from 'zod';
import { getOrNotFound } from '#shared/crud/crud-operations.ts';
import { sentKeys } from '#shared/crud/patch-body.ts';
import { type ControllerSetting, controllerSettings, GLOBAL_SETTINGS_ID } from '#shared/entities/controller-setting.ts';
import { ApiError, invalidField, notFound } from '#shared/errors/api-error.ts';
import { created, empty, list, ok } from '#shared/http/envelope.ts';
import type { Operation, OperationRequest } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { CONTROLLER_ID } from '#shared/ids.ts';
import { parseListParams } from '#shared/list/list-params.ts';
import { pageInMemory } from '#shared/list/page-in-memory.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { tagsField } from '#shared/schemas/common-fields.ts';
import { withOptimisticRetry } from '#shared/store/optimistic-retry.ts';
import { selfLinks } from '#shared/views/entity-ref.ts';

const uri = z
  .string()
  .max(2048)
  .refine((value) => URL.canParse(value), { message: 'must be an absolute URI' });
const uris = z.array(uri).max(100);
const oidcInput = z.object({ redirectUris: uris.nullable().optional(), postLogoutUris: uris.nullable().optional() });

const updateSchema = z.object({ oidc: oidcInput.nullable().optional(), tags: tagsField.optional() });
const createSchema = updateSchema.extend({ controllerId: z.string().min(1).max(255) });
type SettingsInput = z.infer<typeof updateSchema>;

type Oidc = NonNullable<ControllerSetting['oidc']>;

/** The settings of `global` when none were written: no URIs. */
function defaultGlobal(now: string): ControllerSetting {
  return {
    id: GLOBAL_SETTINGS_ID,
    createdAt: now,
    updatedAt: now,
    tags: {},
    oidc: { redirectUris: [], postLogoutUris: [] },
  };
}

/** Only the lists that were given (null clears one, so it is inherited again). */
function oidcOf(input: z.infer<typeof oidcInput> | null | undefined, before: Oidc = {}): Oidc {
  const out: Oidc = { ...before };
  for (const key of ['redirectUris', 'postLogoutUris'] as const) {
    if (!input || !(key in input)) continue;
    const value = input[key];
    if (value === null || value === undefined) delete out[key];
    else out[key] = value;
  }
  return out;
}

function settingsView(doc: ControllerSetting) {
  return {
    id: doc.id,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    tags: doc.tags,
    _links: selfLinks('controller-settings', doc.id),
    oidc: { ...doc.oidc },
  };
}

/** The global settings: stored, or the defaults until someone writes them. */
async function globalSettings(deps: Deps): Promise<ControllerSetting> {
  return (await deps.store.get(controllerSettings, GLOBAL_SETTINGS_ID))?.doc ?? defaultGlobal(deps.config.buildDate);
}

function idOf(request: OperationRequest): string {
  return request.pathParameters.id ?? '';
}

export const listControllerSettings: Operation = async (request, deps) => {
  const params = await parseListParams(request.query, controllerSettings.filterable);
  const [global, own] = await Promise.all([globalSettings(deps), deps.store.get(controllerSettings, CONTROLLER_ID)]);
  const docs = [global, ...(own ? [own.doc] : [])];
  const page = pageInMemory(docs, params, controllerSettings.filterable);
  return list(page.items.map(settingsView), page.pagination, Object.keys(controllerSettings.filterable));
};

export const detailControllerSetting: Operation = async (request, deps) => {
  const id = idOf(request);
  if (id === GLOBAL_SETTINGS_ID) return ok(settingsView(await globalSettings(deps)));
  return ok(settingsView((await getOrNotFound(deps, controllerSettings, id)).doc));
};

/** A controller's own settings and what applies to it: each list its own, else the global one. */
export const detailControllerSettingEffective: Operation = async (request, deps) => {
  const id = idOf(request);
  if (id !== GLOBAL_SETTINGS_ID && id !== CONTROLLER_ID) throw notFound('controller setting', id);
  const [global, own] = await Promise.all([
    globalSettings(deps),
    id === GLOBAL_SETTINGS_ID ? undefined : deps.store.get(controllerSettings, id),
  ]);
  const instance = id === GLOBAL_SETTINGS_ID ? global : own?.doc;
  const base = instance ?? { ...global, id, tags: {} };
  return ok({
    id,
    createdAt: base.createdAt,
    updatedAt: base.updatedAt,
    tags: base.tags,
    _links: selfLinks('controller-settings', id),
    instance: { oidc: { ...instance?.oidc } },
    effective: {
      oidc: {
        redirectUris: instance?.oidc?.redirectUris ?? global.oidc?.redirectUris ?? [],
        postLogoutUris: instance?.oidc?.postLogoutUris ?? global.oidc?.postLogoutUris ?? [],
      },
    },
  });
};

/** Settings for a controller that has none of its own yet; `global` always exists and is updated instead. */
export const createControllerSetting: Operation = async (request, deps) => {
  const input = parseWith(createSchema, request.body ?? {});
  if (input.controllerId === GLOBAL_SETTINGS_ID) {
    throw invalidField('controllerId', 'the global settings always exist; update them instead', input.controllerId);
  }
  if (input.controllerId !== CONTROLLER_ID) {
    throw invalidField('controllerId', `no controller found with id ${input.controllerId}`, input.controllerId);
  }
  const now = deps.now().toISOString();
  const doc: ControllerSetting = {
    id: input.controllerId,
    createdAt: now,
    updatedAt: now,
    tags: input.tags ?? {},
    oidc: oidcOf(input.oidc),
  };
  const ops = deps.store.createOps(controllerSettings, doc);
  const exists = () =>
    invalidField('controllerId', `controller ${input.controllerId} already has settings`, input.controllerId);
  await deps.store.transact([{ ...ops[0]!, onConditionFailed: exists }, ...ops.slice(1)]);
  return created('controller-settings', doc.id);
};

/** PUT and PATCH of `/controller-settings/{id}/effective`: PUT sets every list (unset ones are inherited). */
function update(action: 'replace' | 'patch'): Operation {
  return async (request, deps) => {
    const id = idOf(request);
    const input: SettingsInput = parseWith(updateSchema, request.body ?? {});
    const sent = sentKeys(request.body);
    await withOptimisticRetry(async () => {
      const now = deps.now().toISOString();
      const stored = await deps.store.get(controllerSettings, id);
      if (!stored && id !== GLOBAL_SETTINGS_ID) throw notFound('controller setting', id);
      const before = stored?.doc ?? defaultGlobal(now);
      const next: ControllerSetting = {
        ...before,
        updatedAt: now,
        oidc: action === 'replace' ? oidcOf(input.oidc) : oidcOf(input.oidc, before.oidc),
        tags: action === 'replace' || sent.has('tags') ? (input.tags ?? {}) : before.tags,
      };
      await deps.store.transact(
        stored
          ? deps.store.replaceOps(controllerSettings, stored, next)
          : deps.store.createOps(controllerSettings, next),
      );
    });
    return empty();
  };
}

export const updateControllerSetting = update('replace');
export const patchControllerSetting = update('patch');

/** Removes a controller's own settings, so it follows the global ones again; the global settings stay. */
export const deleteControllerSetting: Operation = async (request, deps) => {
  const id = idOf(request);
  if (id === GLOBAL_SETTINGS_ID) {
    throw new ApiError('CAN_NOT_DELETE_REFERENCED_ENTITY', {
      message: 'The global controller settings apply to every controller; they cannot be deleted.',
    });
  }
  await withOptimisticRetry(async () => {
    const stored = await getOrNotFound(deps, controllerSettings, id);
    await deps.store.transact(deps.store.deleteOps(controllerSettings, stored.doc, stored.version));
  });
  return empty();
};
