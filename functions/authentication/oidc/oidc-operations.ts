import type { Operation } from '#shared/http/operation.ts';
import { oidcAuthorize } from './authorize.ts';
import { oidcAuthorizeCallback } from './callback.ts';
import { oidcEndSession } from './end-session.ts';
import { oidcIntrospect } from './introspect.ts';
import { oidcLoginCert, oidcLoginExtJwt, oidcLoginPage, oidcLoginPassword } from './oidc-logins.ts';
import {
  oidcAuthQueries,
  oidcLoginTotp,
  oidcTotpEnroll,
  oidcTotpEnrollDelete,
  oidcTotpEnrollVerify,
} from './oidc-second-factors.ts';
import { oidcRevoke } from './revoke.ts';
import { oidcToken } from './token.ts';
import { oidcUserInfo } from './userinfo.ts';

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
  oidcRevoke,
  oidcEndSession,
  oidcUserInfo,
  oidcIntrospect,
};
