/** How a policy combines the `#attribute` roles of a field (the reference compares case-insensitively). */
export const POLICY_SEMANTICS = ['AllOf', 'AnyOf'] as const;
export type PolicySemantic = (typeof POLICY_SEMANTICS)[number];
