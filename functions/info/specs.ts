import { notFound } from '#shared/errors/api-error.ts';
import { ok } from '#shared/http/envelope.ts';
import { JSON_HEADERS } from '#shared/http/error-response.ts';
import type { Operation } from '#shared/http/operation.ts';
import { SPEC_IDS } from '#shared/openapi/build-openapi.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { selfLinks } from '#shared/views/entity-ref.ts';

const IDS: readonly string[] = [SPEC_IDS.client, SPEC_IDS.management];

let bodies: Promise<ReadonlyMap<string, string>> | undefined;

/**
 * Our own OpenAPI documents, generated from the route table by `npm run openapi` (scripts/write-openapi.ts says why
 * they are generated ahead rather than here), as the text they are served as. Loaded on the first request for one,
 * not at import: the management document is a quarter of a megabyte that every cold start of `/version` would build.
 */
function specBodies(): Promise<ReadonlyMap<string, string>> {
  bodies ??= Promise.all([
    import('#shared/openapi/generated/client.json', { with: { type: 'json' } }),
    import('#shared/openapi/generated/management.json', { with: { type: 'json' } }),
  ]).then(
    ([client, management]) =>
      new Map([
        [SPEC_IDS.client, JSON.stringify(client.default)],
        [SPEC_IDS.management, JSON.stringify(management.default)],
      ]),
  );
  return bodies;
}

function specView(deps: Deps, id: string) {
  const since = deps.config.buildDate;
  return {
    id,
    name: id,
    createdAt: since,
    updatedAt: since,
    tags: {},
    _links: selfLinks('specs', id, { spec: 'spec' }),
  };
}

function specId(id: string | undefined): string {
  if (id === undefined || !IDS.includes(id)) throw notFound('spec', id ?? '');
  return id;
}

/**
 * `GET /specs`: both documents, on both APIs. (The reference lists only `edge-client`, on either API, though it
 * serves `edge-management` too; listing what is served hides nothing.)
 */
export const listSpecs: Operation = async (_request, deps) => ok(IDS.map((id) => specView(deps, id)));

/** `GET /specs/{id}`: one document's entry. */
export const detailSpec: Operation = async (request, deps) => ok(specView(deps, specId(request.pathParameters.id)));

/**
 * `GET /specs/{id}/spec`: the document itself, not enveloped, as the reference serves it. It is JSON; a caller that
 * asks for `text/yaml` only gets the same text under that type, which is valid YAML (YAML 1.2 contains JSON).
 */
export const detailSpecBody: Operation = async (request) => {
  const id = specId(request.pathParameters.id);
  const body = (await specBodies()).get(id)!;
  const accept = request.headers.accept ?? '';
  const yamlOnly = /\b(text|application)\/(x-)?yaml\b/.test(accept) && !/application\/json|\*\/\*/.test(accept);
  return {
    statusCode: 200,
    body,
    headers: { ...JSON_HEADERS, 'content-type': yamlOnly ? 'text/yaml' : 'application/json' },
  };
};
