import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isRfc3339DateTime, isUuid } from './formats.ts';
import { toJsonSchema } from './swagger-schema.ts';

const DOC = 'https://example.test/doc.json';

describe('isRfc3339DateTime', () => {
  it.each([
    '2024-05-01T12:34:56Z',
    '2024-05-01T12:34:56.5600897Z',
    '2024-05-01t12:34:56z',
    '2024-05-01T12:34:56+05:30',
    '2024-05-01T12:34:56.000-00:00',
    '2024-02-29T00:00:00Z',
    '2000-02-29T00:00:00Z',
    '1998-12-31T23:59:60Z',
    '0001-01-01T00:00:00Z',
  ])('accepts %s', (value) => {
    expect(isRfc3339DateTime(value)).toBe(true);
  });

  it.each([
    '2024-05-01 12:34:56Z',
    '2024-05-01T12:34:56',
    '2024-05-01',
    '2024-05-01T12:34Z',
    '2023-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2024-04-31T00:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-00-01T00:00:00Z',
    '2024-05-01T24:00:00Z',
    '2024-05-01T12:60:00Z',
    '2024-05-01T12:00:61Z',
    '2024-05-01T12:00:00+24:00',
    '2024-05-01T12:00:00+0100',
    '2024-05-01T12:00:00.Z',
    ' 2024-05-01T12:00:00Z',
    '',
  ])('rejects %j', (value) => {
    expect(isRfc3339DateTime(value)).toBe(false);
  });
});

describe('isUuid', () => {
  it('accepts any-version UUIDs in either case and rejects the rest', () => {
    expect(isUuid('66352d7b-a6b2-4ce9-85bb-9f18e318704d')).toBe(true);
    expect(isUuid('66352D7B-A6B2-4CE9-85BB-9F18E318704D')).toBe(true);
    expect(isUuid('66352d7b-a6b2-4ce9-85bb-9f18e318704')).toBe(false);
    expect(isUuid('x7Qd2kLm9')).toBe(false);
  });
});

describe('toJsonSchema (Swagger 2.0 → JSON Schema)', () => {
  it('rewrites definition refs to the registered document and ignores keywords beside $ref', () => {
    expect(toJsonSchema({ $ref: '#/definitions/meta', description: 'x', type: 'string' }, DOC)).toEqual({
      $ref: `${DOC}#/definitions/meta`,
    });
    expect(() => toJsonSchema({ $ref: 'other.yml#/definitions/meta' }, DOC)).toThrow(/unsupported \$ref/);
  });

  it('turns x-nullable into a null-accepting type, enum or anyOf', () => {
    expect(toJsonSchema({ type: 'string', format: 'date-time', 'x-nullable': true }, DOC)).toEqual({
      type: ['string', 'null'],
      format: 'date-time',
    });
    expect(toJsonSchema({ type: 'string', enum: ['A', 'B'], 'x-nullable': true }, DOC)).toEqual({
      type: ['string', 'null'],
      enum: ['A', 'B', null],
    });
    expect(toJsonSchema({ allOf: [{ $ref: '#/definitions/subTags' }], 'x-nullable': true }, DOC)).toEqual({
      anyOf: [{ type: 'null' }, { allOf: [{ $ref: `${DOC}#/definitions/subTags` }] }],
    });
    expect(toJsonSchema({ type: 'object', 'x-nullable': false }, DOC)).toEqual({ type: 'object' });
  });

  it('drops annotations, Swagger-only and vendor keywords but keeps property names that look like keywords', () => {
    const converted = toJsonSchema(
      {
        type: 'object',
        description: 'd',
        example: { a: 1 },
        discriminator: 'type',
        readOnly: true,
        'x-omitempty': true,
        required: ['type'],
        properties: { type: { type: 'string', example: 'x' }, 'x-nullable': { type: 'boolean' } },
        additionalProperties: false,
      },
      DOC,
    );
    expect(converted).toEqual({
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string' }, 'x-nullable': { type: 'boolean' } },
      additionalProperties: false,
    });
  });

  it('converts draft-04 boolean exclusive bounds, type file and empty schemas', () => {
    expect(toJsonSchema({ type: 'integer', maximum: 10, exclusiveMaximum: true, minimum: 0 }, DOC)).toEqual({
      type: 'integer',
      exclusiveMaximum: 10,
      minimum: 0,
    });
    expect(toJsonSchema({ type: 'file' }, DOC)).toEqual({});
    expect(toJsonSchema({ type: 'array', items: null }, DOC)).toEqual({ type: 'array', items: {} });
  });
});

describe('spec location', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it('reads <repo>/../shared/openziti-spec when OPENZITI_SPEC_DIR is unset and that copy is there', async () => {
    const { locateSpecDir, specLock } = await import('./pinned-spec.ts');
    const { specDir } = await import('./spec-source.ts');
    // A clone's layout, built here: whatever this run found the documents in, they are copied beside a clone.
    const root = mkdtempSync(join(tmpdir(), 'spec-layout-'));
    try {
      const sibling = join(root, 'shared', 'openziti-spec');
      for (const path of Object.keys(specLock().files)) {
        mkdirSync(dirname(join(sibling, path)), { recursive: true });
        copyFileSync(join(specDir(), path), join(sibling, path));
      }
      const options = { env: {}, siblingDir: sibling, cacheRoot: join(root, 'no-cache') };
      expect(locateSpecDir(options)).toBe(sibling);
      // Without it, and nothing in the cache, the run is told where the documents are looked for.
      rmSync(sibling, { recursive: true });
      expect(() => locateSpecDir(options)).toThrow(/OPENZITI_SPEC_DIR/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('honours OPENZITI_SPEC_DIR and says so when the document is missing there', async () => {
    vi.stubEnv('OPENZITI_SPEC_DIR', '/nonexistent/openziti-spec');
    vi.resetModules();
    const { loadSpec } = await import('./spec-source.ts');
    expect(() => loadSpec('client')).toThrow(/\/nonexistent\/openziti-spec\/client\.yml \(from OPENZITI_SPEC_DIR\)/);
  });
});
