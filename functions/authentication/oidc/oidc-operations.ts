import type { Operation } from '#shared/http/operation.ts';
import { oidcAuthorize } from './authorize.ts';
import { oidcAuthorizeCallback } from './callback.ts';
import { oidcLoginCert, oidcLoginExtJwt, oidcLoginPage, oidcLoginPassword } from './oidc-logins.ts';
import { oauthError } from './oidc-request.ts';
import {
  oidcAuthQueries,
  oidcLoginTotp,
  oidcTotpEnroll,
  oidcTotpEnrollDelete,
  oidcTotpEnrollVerify,
} from './oidc-second-factors.ts';
import { oidcToken } from './token.ts';

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
  oidcAuthQueries,
  oidcLoginTotp,
  oidcTotpEnroll,
  oidcTotpEnrollDelete,
  oidcTotpEnrollVerify,
  oidcToken,
  oidcRevoke: notYet,
  oidcEndSession: notYet,
  oidcUserInfo: notYet,
  oidcIntrospect: notYet,
};
