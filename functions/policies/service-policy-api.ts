import * as z from 'zod';
import { DIAL_BIND, servicePolicies } from '#shared/entities/policies.ts';
import { optionalRoles, policyApi, policySchemas } from './policy-fields.ts';

export const servicePolicyApi = policyApi({
  def: servicePolicies,
  schemas: policySchemas({
    type: z.enum(DIAL_BIND),
    identityRoles: optionalRoles,
    serviceRoles: optionalRoles,
    postureCheckRoles: optionalRoles,
  }),
  roleFields: ['identityRoles', 'serviceRoles', 'postureCheckRoles'],
  own: (input) => ({ type: input.type }),
});
