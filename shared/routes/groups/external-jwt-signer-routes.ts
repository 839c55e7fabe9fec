import type { Route } from '../route.ts';

/** External JWT signers (served by the authentication group). */
export const EXTERNAL_JWT_SIGNER_ROUTES: readonly Route[] = [];
