import { describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { crudOperations } from '#shared/crud/crud-operations.ts';
import { entityApi } from '#shared/crud/entity-api.ts';
import { variantBodyShape, variants } from '#shared/crud/variants.ts';
import { BASE_FILTERABLE, type EntityDefinition } from '#shared/entities/entity-definition.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import type { OperationRequest } from '#shared/http/operation.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { crudResource } from '#shared/routes/crud-resource.ts';
import { MAX_TRANSACTION_ITEMS } from '#shared/store/entity-store.ts';
import type { WriteOp } from '#shared/store/write-op.ts';

/** A made-up discriminated type: a shape is a circle with a radius or a square with a side (and maybe a colour). */
type Shape = { id: string; createdAt: string; updatedAt: string; tags: Record<string, string | boolean | null> } & (
  | { kind: 'circle'; name: string; radius: number }
  | { kind: 'square'; name: string; side: number; colour: string | null }
);

const shapes: EntityDefinition<Shape> = {
  collection: 'shapes',
  label: 'shape',
  schema: z.any() as z.ZodType<Shape>,
  unique: ['name'],
  filterable: BASE_FILTERABLE,
};
const SHAPES = crudResource('services', '/shapes', 'Shape', 'Shapes');

const NOW = '2026-01-02T03:04:05.000Z';
const STORED: Shape = {
  id: 's1',
  createdAt: '2025-01-01T00:00:00.000Z',
  updatedAt: '2025-01-01T00:00:00.000Z',
  tags: { keep: true },
  kind: 'square',
  name: 'box',
  side: 2,
  colour: 'red',
};

/** Deps whose store holds one shape and records what each transaction would write. */
function fakeDeps(stored: Shape = STORED) {
  const transactions: WriteOp[][] = [];
  const op = (what: string, doc: unknown) => ({ item: { Put: { what, doc } } }) as unknown as WriteOp;
  const store = {
    get: async () => ({ doc: stored, version: 1 }),
    createOps: (_def: unknown, doc: Shape) => [op('create', doc)],
    replaceOps: (_def: unknown, _before: unknown, after: Shape) => [op('replace', after), op('marker', after.name)],
    transact: async (ops: WriteOp[]) => {
      transactions.push(ops);
    },
  };
  const deps = { store, now: () => new Date(NOW) } as unknown as Deps;
  return {
    deps,
    transactions,
    written: (index = 0) => transactions[index]?.[0]?.item.Put as unknown as { doc: Shape },
  };
}

function request(body: unknown): OperationRequest {
  return {
    pathParameters: { id: 's1' },
    query: {},
    body,
    logger: { info: () => {} },
  } as unknown as OperationRequest;
}

const shapeKinds = variants({
  key: 'kind',
  fields: { radius: z.number().positive().nullable().optional(), side: z.number().positive().nullable().optional() },
  of: { circle: { required: ['radius'] }, square: { required: ['side'] } },
});
const bodyShape = { name: z.string(), colour: z.string().nullable().optional(), tags: z.any().optional() };
const shapeApi = entityApi({
  def: shapes,
  createSchema: z.object({ kind: z.enum(['circle', 'square']), ...bodyShape, ...variantBodyShape(shapeKinds) }),
  replaceSchema: z.object({ ...bodyShape, ...variantBodyShape(shapeKinds) }),
  keptOnNull: ['name'],
  variants: shapeKinds,
  create: (input) => ({
    doc:
      input.kind === 'circle'
        ? { kind: 'circle' as const, name: input.name, radius: input.radius! }
        : { kind: 'square' as const, name: input.name, side: input.side!, colour: input.colour ?? null },
  }),
  replace: (before, input) =>
    before.kind === 'circle'
      ? { name: input.name, radius: input.radius! }
      : { name: input.name, side: input.side!, colour: input.colour ?? null },
  view: (_deps, doc) => doc,
});

describe('the CRUD kit', () => {
  it('stamps a new document with its id, timestamps and the body tags', async () => {
    const { deps, written } = fakeDeps();
    const operations = crudOperations(SHAPES, shapeApi);

    const response = await operations.createShape!(request({ kind: 'circle', name: 'ring', radius: 3 }), deps);

    expect(response.statusCode).toBe(201);
    expect(written().doc).toEqual({
      id: expect.any(String),
      createdAt: NOW,
      updatedAt: NOW,
      tags: {},
      kind: 'circle',
      name: 'ring',
      radius: 3,
    });
  });

  it('patches as a replace of the stored document with the sent keys over it, null keeping a kept field', async () => {
    const { deps, written } = fakeDeps();

    await crudOperations(SHAPES, shapeApi).patchShape!(request({ name: null, colour: null }), deps);

    expect(written().doc).toEqual({ ...STORED, colour: null, updatedAt: NOW });
  });

  it('takes the PATCH body from the replace body: every field optional, null allowed where a field is kept', async () => {
    const { deps } = fakeDeps();
    const patch = crudOperations(SHAPES, shapeApi).patchShape!;

    await expect(patch(request({ name: 7 }), deps)).rejects.toMatchObject({
      code: 'COULD_NOT_VALIDATE',
      apiCause: { field: 'name' },
    });
  });

  it('hands the update hook the document before and after, and the room the write left, in one transaction', async () => {
    const { deps, transactions } = fakeDeps();
    const hook = vi.fn(async () => {
      await Promise.resolve();
      return [{ item: { ConditionCheck: { what: 'hook' } } } as unknown as WriteOp];
    });
    const api = { ...shapeApi, updateOps: hook };

    await crudOperations(SHAPES, api).updateShape!(request({ name: 'crate', side: 5 }), deps);

    expect(hook).toHaveBeenCalledWith(
      STORED,
      { ...STORED, name: 'crate', side: 5, colour: null, tags: {}, updatedAt: NOW },
      expect.objectContaining({ now: NOW, room: MAX_TRANSACTION_ITEMS - 2 }),
    );
    expect(transactions).toHaveLength(1);
    expect(transactions[0]!.map((op) => Object.keys(op.item)[0])).toEqual(['Put', 'Put', 'ConditionCheck']);
  });

  it('writes nothing when the update hook refuses the change', async () => {
    const { deps, transactions } = fakeDeps();
    const api = {
      ...shapeApi,
      updateOps: async () => Promise.reject(new ApiError('COULD_NOT_VALIDATE')),
    };

    await expect(crudOperations(SHAPES, api).patchShape!(request({ side: 4 }), deps)).rejects.toBeInstanceOf(ApiError);
    expect(transactions).toEqual([]);
  });
});

describe('a discriminated declaration', () => {
  const create = (body: unknown) => crudOperations(SHAPES, shapeApi).createShape!(request(body), fakeDeps().deps);
  const update = (method: 'updateShape' | 'patchShape', body: unknown) =>
    crudOperations(SHAPES, shapeApi)[method]!(request(body), fakeDeps().deps);

  it.each([
    [
      'a field of another variant',
      { kind: 'circle', name: 'c', radius: 1, side: 2 },
      'side',
      'side is not a field of circle shapes',
    ],
    ['a missing required field', { kind: 'square', name: 's' }, 'side', 'side is required for square shapes'],
    ['an invalid own field', { kind: 'circle', name: 'c', radius: -1 }, 'radius', undefined],
  ])('refuses a create with %s', async (_case, body, field, reason) => {
    await expect(create(body)).rejects.toMatchObject({
      code: 'COULD_NOT_VALIDATE',
      apiCause: { field, ...(reason ? { reason } : {}) },
    });
  });

  it('ignores a blank field of another variant, as clients send every variant field', async () => {
    expect((await create({ kind: 'circle', name: 'c', radius: 1, side: 0 })).statusCode).toBe(201);
  });

  it('keeps the stored variant: a replace naming another, or clearing a required field, is refused', async () => {
    await expect(update('updateShape', { name: 'box', radius: 1 })).rejects.toMatchObject({
      apiCause: { field: 'radius', reason: 'radius is not a field of square shapes' },
    });
    await expect(update('patchShape', { side: null })).rejects.toMatchObject({
      apiCause: { field: 'side', reason: 'side is required for square shapes' },
    });
  });

  it('patches a variant field over the stored ones', async () => {
    const { deps, written } = fakeDeps();

    await crudOperations(SHAPES, shapeApi).patchShape!(request({ side: 9 }), deps);

    expect(written().doc).toEqual({ ...STORED, side: 9, updatedAt: NOW });
  });
});
