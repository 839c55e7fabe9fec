/**
 * A hosting precedence, as identities (their default and per-service ones) and terminators carry it: `required` is
 * chosen before `default`, `failed` only when nothing else is there.
 */
export const PRECEDENCES = ['default', 'required', 'failed'] as const;
