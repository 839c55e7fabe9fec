import { getOrNotFound } from '#shared/crud/crud-operations.ts';
import { pageViews } from '#shared/crud/page-views.ts';
import { services } from '#shared/entities/service.ts';
import { terminators } from '#shared/entities/terminator.ts';
import { list } from '#shared/http/envelope.ts';
import { documented } from '#shared/http/operation.ts';
import { listEntities } from '#shared/list/list-entities.ts';
import { parseListParams } from '#shared/list/list-params.ts';
import type { BoolExpr } from '#shared/query/filter-ast.ts';
import { terminatorApi } from './terminator-api.ts';

/** `GET /services/{id}/terminators`: the service's terminators, as `GET /terminators` with `service = "<id>"`. */
export const listServiceTerminators = documented(
  async (request, deps) => {
    const service = await getOrNotFound(deps, services, request.pathParameters.id ?? '');
    const params = await parseListParams(request.query, terminators.filterable);
    const ofService: BoolExpr = {
      kind: 'equals',
      lhs: { kind: 'field', field: 'service', position: 0 },
      negated: false,
      value: { type: 'string', value: service.doc.id, position: 0 },
    };
    const where: BoolExpr = params.where ? { kind: 'and', operands: [ofService, params.where] } : ofService;
    const page = await listEntities(deps, terminators, { ...params, where });
    return list(await pageViews(deps, terminatorApi, page.items), page.pagination, Object.keys(terminators.filterable));
  },
  { list: { roleFilter: false } },
);
