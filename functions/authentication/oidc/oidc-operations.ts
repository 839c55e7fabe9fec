import type { Operation } from '#shared/http/operation.ts';
import { oidcAuthorize } from './authorize.ts';
import { oidcAuthorizeCallback } from './callback.ts';
import { oidcEndSession } from './end-session.ts';
import { oidcIntrospect } from './introspect.ts';
import { oidcLoginCert, oidcLoginExtJwt, oidcLoginPage, oidcLoginPassword } from './oidc-logins.ts';
import { oauthError } from './oidc-request.ts';
import { oidcRevoke } from './revoke.ts';
import { oidcToken } from './token.ts';
import { oidcUserInfo } from './userinfo.ts';

// TODO(issue 39): served by the next commits of this session.
const notYet: Operation = async () => oauthError('temporarily_unavailable', 'not served yet', 501);

/** The OIDC provider's operations of the authentication function, loaded with the first OIDC request. */
export const oidcOperations: Readonly<Record<string, Operation>> = {
  oidcAuthorize,
  oidcAuthorizeCallback,
  oidcLoginPage,
  oidcLoginPassword,
  oidcLoginCert,
  oidcLoginExtJwt,
  oidcAuthQueries: notYet,
  oidcLoginTotp: notYet,
  oidcTotpEnroll: notYet,
  oidcTotpEnrollDelete: notYet,
  oidcTotpEnrollVerify: notYet,
  oidcToken,
  oidcRevoke,
  oidcEndSession,
  oidcUserInfo,
  oidcIntrospect,
};
