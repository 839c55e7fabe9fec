import type { HttpResult } from '#shared/http/http-result.ts';
import {
  type OidcSessionFacts,
  type SignedToken,
  signAccessToken,
  signIdToken,
  signRefreshToken,
} from '#shared/oidc/oidc-tokens.ts';
import type { Deps } from '#shared/ports/deps.ts';
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
 * Makes a new refresh token the session's one live refresh token while spending the grant it was issued for (the code,
 * or the refresh token it replaces), in one conditional write: a grant used twice at once issues once. Answers why it
 * was refused, or undefined when it committed.
 */
export type RefreshCommit = (refreshJti: string) => Promise<string | undefined>;

/**
 * A new access token and refresh token (and an ID token when `idToken` says so), good once `commit` has made the
 * refresh token the session's live one; a commit that finds its grant spent is refused: the answer is then the reason.
 */
export async function issueTokens(
  deps: Deps,
  issuer: string,
  facts: OidcSessionFacts,
  commit: RefreshCommit,
  idToken: { readonly nonce: string | undefined } | false,
): Promise<IssuedTokens | { readonly refused: string }> {
  const [access, refresh, id] = await Promise.all([
    signAccessToken(deps, issuer, facts),
    signRefreshToken(deps, issuer, facts),
    idToken ? signIdToken(deps, issuer, facts, idToken.nonce) : undefined,
  ]);
  const refused = await commit(refresh.jti);
  if (refused !== undefined) return { refused };
  return { access, refresh, ...(id ? { id } : {}) };
}
