import { describe, expect, it, vi } from 'vitest';
import { identities } from '#shared/entities/identity.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { deleteEntity } from '#shared/store/delete-entity.ts';
import type { Stored } from '#shared/store/entity-store.ts';

describe('deleteEntity', () => {
  it('answers why the delete stopped even when clearing its mark fails', async () => {
    const warn = vi.fn();
    const store = {
      tableName: 't',
      // The entity is still referenced by a service policy, which refuses the delete.
      db: { send: async () => ({ Items: [{ SK: 'REFBY#service-policies#sp1#identityRoles' }] }) },
      markDeleting: async () => 2,
      unmarkDeleting: async () => Promise.reject(new Error('throttled')),
    };
    const deps = { store, logger: { warn } } as unknown as Deps;
    const stored = { doc: { id: 'i1' }, version: 1 } as unknown as Stored<never>;

    const refused = deleteEntity(deps, identities, stored);

    await expect(refused).rejects.toBeInstanceOf(ApiError);
    await expect(refused).rejects.toMatchObject({ code: 'CAN_NOT_DELETE_REFERENCED_ENTITY' });
    expect(warn).toHaveBeenCalledWith('could not clear a delete mark', expect.objectContaining({ error: 'throttled' }));
  });
});
