import { BASE_FILTERABLE } from '#shared/entities/entity-definition.ts';
import { type ExternalJwtSigner, externalJwtSigners } from '#shared/entities/external-jwt-signer.ts';
import { list } from '#shared/http/envelope.ts';
import { documented, type Operation } from '#shared/http/operation.ts';
import { listEntities } from '#shared/list/list-entities.ts';
import { parseListParams } from '#shared/list/list-params.ts';
import type { FilterableFields } from '#shared/query/filterable-fields.ts';
import { selfLinks } from '#shared/views/entity-ref.ts';

/** What an anonymous client may filter on: the fields it is shown, nothing it could probe the rest with. */
const CLIENT_FILTERABLE: FilterableFields = {
  ...BASE_FILTERABLE,
  name: 'string',
  clientId: 'string',
  externalAuthUrl: 'string',
};

/** A signer as a client sees it before logging in: where to get a token, never its keys or issuer. */
function clientSignerView(doc: ExternalJwtSigner) {
  return {
    id: doc.id,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    tags: doc.tags,
    _links: selfLinks('external-jwt-signers', doc.id),
    name: doc.name,
    audience: doc.audience,
    clientId: doc.clientId,
    // The client document requires a string; a signer without a login page has an empty one.
    externalAuthUrl: doc.externalAuthUrl ?? '',
    scopes: doc.scopes,
    targetToken: doc.targetToken,
  };
}

/**
 * Client `GET /external-jwt-signers` (anonymous): the enabled signers, so a client can offer their identity
 * providers' logins. The caller's filter is validated on its own, then narrowed to enabled signers.
 */
export const listClientExternalJwtSigners: Operation = documented(
  async (request, deps) => {
    const asked = parseListParams(request.query, CLIENT_FILTERABLE);
    const own = request.query.filter?.[0]?.trim();
    const filter = own ? `(${own}) and enabled = true` : 'enabled = true';
    const params = parseListParams(
      { ...request.query, filter: [filter] },
      {
        ...CLIENT_FILTERABLE,
        enabled: 'boolean',
      },
    );
    const page = await listEntities(deps, externalJwtSigners, { ...params, limit: asked.limit, offset: asked.offset });
    return list(page.items.map(clientSignerView), page.pagination, Object.keys(CLIENT_FILTERABLE));
  },
  { list: { roleFilter: false } },
);
