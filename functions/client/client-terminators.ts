import { terminators } from '#shared/entities/terminator.ts';
import { list } from '#shared/http/envelope.ts';
import { callerOf, documented } from '#shared/http/operation.ts';
import { listEntities } from '#shared/list/list-entities.ts';
import { parseListParams } from '#shared/list/list-params.ts';
import type { BoolExpr } from '#shared/query/filter-ast.ts';
import { clientTerminatorView } from '#shared/views/client-terminator-view.ts';
import { reachableService } from './reachable-service.ts';

/**
 * Client `GET /services/{id}/terminators`: the terminators of a service the caller may dial or bind (404 for any
 * other), filtered and paged like the management list, in the client's view.
 */
export const listServiceTerminators = documented(
  async (request, deps) => {
    const caller = callerOf(request);
    const params = await parseListParams(request.query, terminators.filterable);
    const { service } = await reachableService(deps, caller, request.pathParameters.id ?? '');
    const ofService: BoolExpr = {
      kind: 'equals',
      lhs: { kind: 'field', field: 'service', position: 0 },
      negated: false,
      value: { type: 'string', value: service.id, position: 0 },
    };
    const where: BoolExpr = params.where ? { kind: 'and', operands: [ofService, params.where] } : ofService;
    const page = await listEntities(deps, terminators, { ...params, where });
    return list(
      page.items.map((terminator) => clientTerminatorView(terminator, service)),
      page.pagination,
      Object.keys(terminators.filterable),
    );
  },
  { list: { roleFilter: false } },
);
