/**
 * Locating and parsing the public OpenZiti Edge API documents (Swagger 2.0, YAML).
 *
 * The Edge API documents are NOT part of this repository: `pinned-spec.ts` finds the locked copy (`OPENZITI_SPEC_DIR`,
 * the copy beside the clone, or the download cache the test run fills) and checks it against the lock. The fabric API's
 * served operations are restated beside this file (`fabric-api.yml`). Each document
 * is read and parsed at most once per process.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, type ScalarTag } from 'yaml';
import { locateSpecDir } from './pinned-spec.ts';

/**
 * Which document: the Edge APIs' `client.yml` (basePath `/edge/client/v1`) or `management.yml`
 * (`/edge/management/v1`), or the fabric API's (`/fabric/v1`), whose served part `fabric-api.yml` beside this file
 * restates (it says why it lives in the repository).
 */
export type Api = 'client' | 'management' | 'fabric';

/** A parsed JSON/YAML object (never an array, never null). */
export type JsonObject = { readonly [key: string]: unknown };

/** A loaded Swagger 2.0 document. */
export interface SpecDocument {
  readonly api: Api;
  /** Absolute path of the YAML file it was read from. */
  readonly file: string;
  /** e.g. `/edge/client/v1` */
  readonly basePath: string;
  /** `paths` — path template → path item. */
  readonly paths: JsonObject;
  /** `definitions` — name → Swagger schema. */
  readonly definitions: JsonObject;
  /** `responses` — name → shared response object (empty when the document has none). */
  readonly responses: JsonObject;
  /** The document-wide `security` requirement, which an operation's own `security` replaces. */
  readonly security: readonly unknown[];
}

/** Narrows a parsed value to a plain object. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The directory holding the locked `client.yml` and `management.yml`, checked against their SHA-256. */
export function specDir(): string {
  return locateSpecDir();
}

/**
 * The bundled documents were emitted by go-yaml, which writes integral floats as `!!float 255`. The YAML 1.2 core
 * schema's float tag only accepts literals with a dot or exponent, so `yaml` would leave those as the *string*
 * `"255"` (and `maxLength: "255"` is not a usable JSON Schema). This tag resolves any explicit `!!float` as a number.
 */
const explicitFloat: ScalarTag = {
  tag: 'tag:yaml.org,2002:float',
  resolve(value, onError) {
    const n = Number(value);
    if (Number.isNaN(n) && value.trim().toLowerCase() !== '.nan') onError(`not a number: !!float ${value}`);
    return n;
  },
};

const cache = new Map<Api, SpecDocument>();

/** The fabric API's served operations, restated in the repository (no copy of the reference's is on CI's machines). */
const FABRIC_DOCUMENT = fileURLToPath(new URL('./fabric-api.yml', import.meta.url));

/** Loads (once per process) and minimally checks the document for `api`. */
export function loadSpec(api: Api): SpecDocument {
  const cached = cache.get(api);
  if (cached !== undefined) return cached;

  const file = api === 'fabric' ? FABRIC_DOCUMENT : join(specDir(), `${api}.yml`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(
      `cannot read the OpenZiti ${api} API document at ${file}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const raw: unknown = parse(text, { customTags: (tags) => [...tags, explicitFloat], logLevel: 'error' });
  if (!isJsonObject(raw) || raw.swagger !== '2.0') throw new Error(`${file} is not a Swagger 2.0 document`);
  const { basePath, paths, definitions, responses, security } = raw;
  if (typeof basePath !== 'string' || !isJsonObject(paths) || !isJsonObject(definitions)) {
    throw new Error(`${file} lacks basePath, paths or definitions`);
  }
  const doc: SpecDocument = {
    api,
    file,
    basePath,
    paths,
    definitions,
    responses: isJsonObject(responses) ? responses : {},
    security: Array.isArray(security) ? security : [],
  };
  cache.set(api, doc);
  return doc;
}
