/**
 * Contract-test harness: checks an HTTP response (status + parsed JSON body) against the response the public
 * OpenZiti Edge API documents describe for that operation.
 *
 * ```ts
 * import { expectMatchesSpec } from '../contract/openziti-spec.ts';
 * expectMatchesSpec('client', 'GET', '/current-identity', res.status, await res.json());
 * ```
 *
 * - `pathTemplate` is the document's own path template, relative to the basePath (`/identities/{id}`, `/`,
 *   `/version`, `/current-api-session`); a leading basePath (`/edge/client/v1/...`) is stripped. Concrete paths
 *   (`/identities/abc`) are NOT matched against templates.
 * - `method` is case-insensitive.
 * - The status is looked up in the operation's `responses`: exact code first, else `default`; a status that is not
 *   documented is a mismatch. Shared responses (`$ref: '#/responses/X'`) are resolved.
 * - The body is validated with ajv 8 (`allErrors`, `strict: false`) against the response schema converted from
 *   Swagger 2.0 (see `swagger-schema.ts` for the exact rules: `x-nullable`, `$ref`, dropped keywords) and with
 *   formats from `formats.ts` (`date-time` and `uuid` checked, every other format accepted).
 * - A documented response without a `schema` (e.g. the PNG of `GET /current-identity/mfa/qr-code`) accepts any body.
 *   A response with a schema and an `undefined` body is a mismatch.
 * - The documents are loaded from outside the repository (see `spec-source.ts`: `OPENZITI_SPEC_DIR`, else
 *   `<repo>/../shared/openziti-spec/`), parsed once per process; validators are compiled lazily and cached per
 *   API + operation + documented status.
 * - {@link specMismatches} returns the mismatches instead of throwing, for tests that must tolerate a known
 *   document defect explicitly (filter the list, then assert it is empty).
 *
 * Known document quirks (the documents are stricter than, or inconsistent with, what go-swagger-generated
 * OpenZiti controllers send; pinned in `openziti-spec.test.ts`):
 * - `tags` → `subTags` says every tag *value* is an object: `tags: {team: 'blue'}` is a mismatch at
 *   `/data/tags/team`; `{}` and `null` fit.
 * - `required` names that no part of the schema declares: `apiSessionDetail.cachedUpdatedAt` (so every
 *   `currentApiSessionDetail`, i.e. `POST /authenticate` 200 and `GET /current-api-session` 200), management
 *   `edgeRouterDetail` `os`/`version`/`arch`/`buildDate`/`revision` (top level, not only in `versionInfo`),
 *   management `enrollmentDetail.details`. The Go model has no such fields, so a real controller never sends them.
 * - `error.cause` (`apiErrorCause`) and `error.args` (`apiErrorArgs`) are objects and not `x-nullable`: omit them
 *   rather than sending `null`/`""` (the documents' own examples do the latter and fail).
 * - `x-nullable` does not make a field optional: identity `externalId` is required and nullable (send `null`).
 * - `empty` (most DELETE 200s) requires `data` (an object) and `meta`.
 * - No operation documents 500 or `default`; `GET /version` and `GET /` document only 200.
 * - `link.href` is `format: uri` but real hrefs are relative (`./identities/x`); `uri`/`url` are not checked.
 * - `format: uuid` is checked: client `nonceChallenge.nonce`, management CA `verificationToken`.
 * - `version.buildDate` is a plain string (example `2020-02-11 16:09:08`), not `date-time`.
 *
 * @module
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { CHECKED_FORMATS, UNCHECKED_FORMAT } from './formats.ts';
import { type Api, isJsonObject, type JsonObject, loadSpec, type SpecDocument } from './spec-source.ts';
import {
  collectFormats,
  definitionsDocument,
  isNullableNoise,
  schemaLocations,
  toJsonSchema,
} from './swagger-schema.ts';

export type { Api } from './spec-source.ts';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

/** One operation of a document. */
export interface SpecOperation {
  readonly api: Api;
  /** Upper case, e.g. `GET`. */
  readonly method: string;
  /** Relative to the basePath, e.g. `/identities/{id}`. */
  readonly pathTemplate: string;
  /** The document's `operationId`, or a synthesized one when the document has none (see {@link operationIdOf}). */
  readonly operationId: string;
  /** Whether {@link operationId} came from the document. */
  readonly documentedOperationId: boolean;
  /** The documented response keys, e.g. `['200', '401', 'default']`. */
  readonly statuses: readonly string[];
  /** Whether the document lets anyone call it (`security: []`, its own or the document's). */
  readonly anonymous: boolean;
}

interface Compiled {
  readonly doc: SpecDocument;
  readonly ajv: Ajv;
  readonly docId: string;
}

const compiledApis = new Map<Api, Compiled>();
const validators = new Map<string, ValidateFunction | null>();

function compiledApi(api: Api): Compiled {
  const cached = compiledApis.get(api);
  if (cached !== undefined) return cached;
  const doc = loadSpec(api);
  const docId = `https://openziti.io/edge-api/${api}.json`;
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: true, verbose: true });
  for (const [name, check] of Object.entries(CHECKED_FORMATS)) ajv.addFormat(name, check);
  for (const name of collectFormats(doc.definitions, collectFormats(doc.paths))) {
    if (!(name in CHECKED_FORMATS)) ajv.addFormat(name, UNCHECKED_FORMAT);
  }
  ajv.addSchema(definitionsDocument(doc.definitions, docId));
  const compiled: Compiled = { doc, ajv, docId };
  compiledApis.set(api, compiled);
  return compiled;
}

function synthesizedOperationId(method: string, pathTemplate: string): string {
  const words = pathTemplate
    .split('/')
    .filter((s) => s !== '')
    .flatMap((segment) => {
      const param = /^\{(.+)\}$/.exec(segment);
      return param?.[1] !== undefined ? ['by', ...param[1].split(/[^A-Za-z0-9]+/)] : segment.split(/[^A-Za-z0-9]+/);
    })
    .filter((w) => w !== '');
  return method + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}

function relativePath(doc: SpecDocument, pathTemplate: string): string {
  if (pathTemplate === doc.basePath) return '/';
  return pathTemplate.startsWith(`${doc.basePath}/`) ? pathTemplate.slice(doc.basePath.length) : pathTemplate;
}

interface Located {
  readonly doc: SpecDocument;
  readonly method: string;
  readonly pathTemplate: string;
  readonly operation: JsonObject;
  readonly operationId: string;
}

function locate(api: Api, method: string, pathTemplate: string): Located {
  const doc = loadSpec(api);
  const m = method.toLowerCase();
  const path = relativePath(doc, pathTemplate);
  const item = doc.paths[path];
  if (!isJsonObject(item)) {
    throw new Error(`the OpenZiti ${api} API document has no path ${JSON.stringify(path)} (${doc.file})`);
  }
  const operation = (HTTP_METHODS as readonly string[]).includes(m) ? item[m] : undefined;
  if (!isJsonObject(operation)) {
    const known = HTTP_METHODS.filter((k) => isJsonObject(item[k])).map((k) => k.toUpperCase());
    throw new Error(
      `the OpenZiti ${api} API document has no operation ${method.toUpperCase()} ${path} (documented: ${known.join(', ')})`,
    );
  }
  const { operationId } = operation;
  return {
    doc,
    method: m,
    pathTemplate: path,
    operation,
    operationId: typeof operationId === 'string' ? operationId : synthesizedOperationId(m, path),
  };
}

/**
 * The `operationId` of `method` + `pathTemplate`, for naming tests. Throws when the document has no such operation.
 *
 * One documented operation has no `operationId` (`DELETE /current-api-session`, client API); for such operations
 * a name is synthesized from the method and path (`deleteCurrentApiSession`; `{x}` segments become `ByX`).
 */
export function operationIdOf(api: Api, method: string, pathTemplate: string): string {
  return locate(api, method, pathTemplate).operationId;
}

/** Every operation of the document for `api`, in document order (for coverage reports). */
export function specOperations(api: Api): SpecOperation[] {
  const doc = loadSpec(api);
  const out: SpecOperation[] = [];
  for (const [pathTemplate, item] of Object.entries(doc.paths)) {
    if (!isJsonObject(item)) continue;
    for (const m of HTTP_METHODS) {
      const operation = item[m];
      if (!isJsonObject(operation)) continue;
      const { operationId, responses } = operation;
      out.push({
        api,
        method: m.toUpperCase(),
        pathTemplate,
        operationId: typeof operationId === 'string' ? operationId : synthesizedOperationId(m, pathTemplate),
        documentedOperationId: typeof operationId === 'string',
        statuses: isJsonObject(responses) ? Object.keys(responses) : [],
        anonymous: (Array.isArray(operation.security) ? operation.security : doc.security).length === 0,
      });
    }
  }
  return out;
}

/** The document's basePath, e.g. `/edge/client/v1`. */
export function specBasePath(api: Api): string {
  return loadSpec(api).basePath;
}

function resolveResponse(doc: SpecDocument, response: unknown, where: string): JsonObject {
  let current = response;
  for (let hops = 0; hops < 10; hops++) {
    if (!isJsonObject(current)) throw new Error(`${where} is not a response object`);
    const ref = current.$ref;
    if (typeof ref !== 'string') return current;
    const prefix = '#/responses/';
    if (!ref.startsWith(prefix)) throw new Error(`${where}: unsupported response $ref ${JSON.stringify(ref)}`);
    current = doc.responses[ref.slice(prefix.length)];
    where = ref;
  }
  throw new Error(`${where}: response $ref chain too long`);
}

/** The validator for one documented response; `null` when the response has no schema (any body accepted). */
function validatorFor(api: Api, located: Located, statusKey: string): ValidateFunction | null {
  const key = `${api} ${located.method} ${located.pathTemplate} ${statusKey}`;
  const cached = validators.get(key);
  if (cached !== undefined) return cached;

  const { ajv, docId, doc } = compiledApi(api);
  const responses = located.operation.responses;
  const where = `${located.method.toUpperCase()} ${located.pathTemplate} responses/${statusKey}`;
  const response = resolveResponse(doc, isJsonObject(responses) ? responses[statusKey] : undefined, where);
  let validate: ValidateFunction | null = null;
  if (response.schema !== undefined) {
    const schema = toJsonSchema(response.schema, docId, `${where}/schema`);
    // A bare $ref goes through ajv's own cache, so the many responses sharing an envelope compile it once.
    const ref = isJsonObject(schema) && Object.keys(schema).length === 1 ? schema.$ref : undefined;
    if (typeof ref === 'string') {
      const found = ajv.getSchema(ref);
      if (found === undefined) throw new Error(`${where}: unresolvable ${ref}`);
      validate = found;
    } else {
      validate = ajv.compile(isJsonObject(schema) || typeof schema === 'boolean' ? schema : {});
    }
  }
  validators.set(key, validate);
  return validate;
}

function valueAt(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  let current = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(current)) current = current[Number(key)];
    else if (isJsonObject(current)) current = current[key];
    else return undefined;
  }
  return current;
}

function preview(value: unknown): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** `"<pointer>: <message>"` — the part used to drop duplicates (e.g. one type error reached through two `allOf`s). */
function formatError(error: ErrorObject, body: unknown): string {
  const pointer = error.instancePath === '' ? '(root)' : error.instancePath;
  let message = error.message ?? error.keyword;
  const { params } = error;
  if (error.keyword === 'additionalProperties') message += ` (${JSON.stringify(params.additionalProperty)})`;
  if (error.keyword === 'enum') message += ` ${JSON.stringify(params.allowedValues)}`;
  if (['type', 'enum', 'format', 'pattern', 'minimum', 'maximum', 'minLength', 'maxLength'].includes(error.keyword)) {
    message += `, got ${preview(valueAt(body, error.instancePath))}`;
  }
  return `${pointer}: ${message}`;
}

/** Where in the Swagger document the failing keyword is (ajv's own `schemaPath` is relative to whichever `$ref`
 * target it compiled separately, which is ambiguous), e.g. `#/definitions/apiSessionDetail/allOf/1/required`. */
function schemaLocationOf(error: ErrorObject): string {
  const parent: unknown = error.parentSchema;
  const location = typeof parent === 'object' && parent !== null ? schemaLocations.get(parent) : undefined;
  return location === undefined ? `schema ${error.schemaPath}` : `${location}/${error.keyword}`;
}

function formatErrors(errors: readonly ErrorObject[], body: unknown): string[] {
  const lines = new Map<string, string>();
  for (const error of errors) {
    const line = formatError(error, body);
    if (!lines.has(line)) lines.set(line, `${line} [${schemaLocationOf(error)}]`);
  }
  return [...lines.values()];
}

/**
 * Every way the response differs from what the document says for `method` + `pathTemplate` answering `status`, as
 * `"<JSON pointer>: <message>"` strings (`(root)` for the whole body); empty when it fits. An undocumented status is
 * one mismatch. Throws (rather than returning) when the document has no such operation.
 */
export function specMismatches(
  api: Api,
  method: string,
  pathTemplate: string,
  status: number,
  body: unknown,
): string[] {
  const located = locate(api, method, pathTemplate);
  const responses = isJsonObject(located.operation.responses) ? located.operation.responses : {};
  const exact = String(status);
  const statusKey = exact in responses ? exact : 'default' in responses ? 'default' : undefined;
  if (statusKey === undefined) {
    return [`(root): status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`];
  }
  const validate = validatorFor(api, located, statusKey);
  if (validate === null) return [];
  if (body === undefined) return ['(root): the documented response has a body schema but there is no body'];
  if (validate(body)) return [];
  const errors = validate.errors ?? [];
  const relevant = errors.filter((e) => !isNullableNoise(e));
  return formatErrors(relevant.length > 0 ? relevant : errors, body);
}

/**
 * Where our specification (`../shared/spec`) and the OpenZiti documents disagree, the specification wins; these
 * mismatches are therefore expected and not reported by {@link expectMatchesSpec} ({@link specMismatches} still
 * lists them).
 */
export const SPEC_WINS: readonly { readonly location: string; readonly why: string }[] = [
  {
    // Spec §2.1: "tags: map of user-defined keys to values; values limited to null, string, boolean". The document's
    // `subTags` types every value as an object, which no real tag is.
    location: '[#/definitions/subTags/additionalProperties/type]',
    why: 'tag values are strings, booleans or null (spec §2.1)',
  },
];

/**
 * Throws an Error listing every mismatch (JSON pointer + message) when `body` with `status` does not fit the
 * response the OpenZiti `api` document gives for `method` + `pathTemplate`; also throws when there is no such
 * operation. See the module comment for the matching rules. `knownDeviations` names mismatches a test knows of and
 * accepts (where our specification or the reference's real answers differ from the document), each a pattern.
 */
export function expectMatchesSpec(
  api: Api,
  method: string,
  pathTemplate: string,
  status: number,
  body: unknown,
  knownDeviations: readonly RegExp[] = [],
): void {
  const mismatches = specMismatches(api, method, pathTemplate, status, body).filter(
    (mismatch) =>
      !SPEC_WINS.some((deviation) => mismatch.endsWith(deviation.location)) &&
      !knownDeviations.some((deviation) => deviation.test(mismatch)),
  );
  if (mismatches.length === 0) return;
  const opId = operationIdOf(api, method, pathTemplate);
  throw new Error(
    `${method.toUpperCase()} ${pathTemplate} → ${status} does not match the OpenZiti ${api} API document ` +
      `(operation ${opId}), ${mismatches.length} mismatch(es):\n${mismatches.map((m) => `  ${m}`).join('\n')}`,
  );
}
