import { createHash, randomBytes } from 'node:crypto';
import { ApiError } from '#shared/errors/api-error.ts';
import type { Operation } from '#shared/http/operation.ts';
import { codeIssuedOp, putCodeOp } from '#shared/store/oidc-items.ts';
import {
  isComplete,
  namedAuthRequest,
  oauthError,
  oidcParams,
  redirect,
  sessionOfAuthRequest,
  unknownAuthRequest,
} from './oidc-request.ts';

/** What the table keeps of a code: its SHA-256, hex (the code itself is only ever in the client's hands). */
export function codeHashOf(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('hex');
}

/**
 * `GET /oidc/authorize/callback?id=`: an auth request whose login has every factor gets its code, once, and the
 * client is sent back to its redirect URI with it (`code`, `state`). The code lives as long as its auth request.
 */
export const oidcAuthorizeCallback: Operation = async (request, deps) => {
  const authRequest = await namedAuthRequest(deps, oidcParams(request));
  if (!authRequest) return unknownAuthRequest();
  const session = await sessionOfAuthRequest(deps, authRequest);
  if (!session || !isComplete(session)) {
    return oauthError('invalid_request', 'the auth request has no complete login: log in and give every factor first');
  }
  const code = randomBytes(32).toString('base64url');
  try {
    await deps.store.transact([
      codeIssuedOp(deps.store, authRequest.id, deps.now().toISOString()),
      putCodeOp(deps.store, codeHashOf(code), authRequest),
    ]);
  } catch (error) {
    if (error instanceof ApiError) return oauthError('invalid_request', error.message);
    throw error;
  }
  const back = new URL(authRequest.redirectUri);
  back.searchParams.set('code', code);
  if (authRequest.state !== undefined) back.searchParams.set('state', authRequest.state);
  return redirect(back.toString());
};
