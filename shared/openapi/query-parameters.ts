import type { QueryParameterDoc } from '../http/operation.ts';

/** The `configTypes` parameter of the service lists and details: whose config data `config` carries. */
export const CONFIG_TYPES_QUERY: QueryParameterDoc = {
  name: 'configTypes',
  description: 'Config types (ids or names, or `all`) whose data the `config` map of each service carries',
  repeated: true,
};
