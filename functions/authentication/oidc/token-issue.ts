import { ApiError } from '#shared/errors/api-error.ts';
import type { HttpResult } from '#shared/http/http-result.ts';
import {
  type OidcSessionFacts,
  type SignedToken,
  signAccessToken,
  signIdToken,
  signRefreshToken,
} from '#shared/oidc/oidc-tokens.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { putRefreshOp } from '#shared/store/oidc-items.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { oauthError } from './oidc-request.ts';

/** A grant refused: 400 `invalid_grant`, the one error a client of the token endpoint acts on (it logs in again). */
export const invalidGrant = (description: string): HttpResult => oauthError('invalid_grant', description);

/** Seconds from now until `exp` (epoch seconds): a token answer's `expires_in`. */
export function secondsUntil(deps: Deps, exp: number): number {
  return exp - Math.floor(deps.now().getTime() / 1000);
}

/** What a grant that issues a refresh token hands out. */
export interface IssuedTokens {
  readonly access: SignedToken;
  readonly refresh: SignedToken;
  /** Only when the grant gives an ID token beside them (the code's exchange and `refresh_token`). */
  readonly id?: SignedToken;
}

/**
 * A new access token and refresh token (and an ID token when `idToken` says so), with the writes that make the
 * refresh token good: its `jti` kept as live, committed with `spend` (the code or the refresh token the grant used) in
 * one transaction, so a grant used twice at once issues once. A spend that finds its grant gone is refused: the
 * answer is then the reason.
 */
export async function issueTokens(
  deps: Deps,
  issuer: string,
  facts: OidcSessionFacts,
  spend: readonly WriteOp[],
  idToken: { readonly nonce: string | undefined } | false,
): Promise<IssuedTokens | { readonly refused: string }> {
  const [access, refresh, id] = await Promise.all([
    signAccessToken(deps, issuer, facts),
    signRefreshToken(deps, issuer, facts),
    idToken ? signIdToken(deps, issuer, facts, idToken.nonce) : undefined,
  ]);
  try {
    await deps.store.transact([...spend, putRefreshOp(deps.store, refresh.jti, facts.apiSessionId, refresh.exp)]);
  } catch (error) {
    if (error instanceof ApiError) return { refused: error.message };
    throw error;
  }
  return { access, refresh, ...(id ? { id } : {}) };
}
