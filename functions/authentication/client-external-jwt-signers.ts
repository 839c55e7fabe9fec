import { BASE_FILTERABLE } from '#shared/entities/entity-definition.ts';
import { externalJwtSigners } from '#shared/entities/external-jwt-signer.ts';
import { list } from '#shared/http/envelope.ts';
import { documented, type Operation } from '#shared/http/operation.ts';
import { listEntities } from '#shared/list/list-entities.ts';
import { parseListParams } from '#shared/list/list-params.ts';
import type { FilterableFields } from '#shared/query/filterable-fields.ts';
import { clientSignerView } from '#shared/views/external-jwt-signer-view.ts';

/** What an anonymous client may filter on: the fields it is shown, nothing it could probe the rest with. */
const CLIENT_FILTERABLE: FilterableFields = {
  ...BASE_FILTERABLE,
  name: 'string',
  clientId: 'string',
  externalAuthUrl: 'string',
};

/**
 * Client `GET /external-jwt-signers` (anonymous): the enabled signers, so a client can offer their identity
 * providers' logins. The caller's filter is validated on its own, then narrowed to enabled signers.
 */
export const listClientExternalJwtSigners: Operation = documented(
  async (request, deps) => {
    const asked = await parseListParams(request.query, CLIENT_FILTERABLE);
    const own = request.query.filter?.[0]?.trim();
    const filter = own ? `(${own}) and enabled = true` : 'enabled = true';
    const params = await parseListParams(
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
