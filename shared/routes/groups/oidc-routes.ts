import type { Route } from '../route.ts';
import { OIDC, route } from '../route-builder.ts';

/**
 * The OIDC provider (`/oidc`), where OpenZiti 2 SDKs log in: the reference's paths (`docs/oidc-design.md`, A), each
 * anonymous to the route table since each checks its own credentials (a login its auth request and primary
 * credential, the token endpoint its code, refresh token and PKCE verifier). Discovery and the keys are the info
 * function's (cacheable, nothing read of the table); everything that logs in, mints or ends tokens is the
 * authentication function's, beside the legacy login whose code it shares. The names are ours: the provider has no
 * OpenAPI document.
 */
/** Discovery, the keys and the signed-out page: the info function's. */
export const OIDC_INFO_ROUTES: readonly Route[] = [
  route('GET', '/.well-known/openid-configuration', OIDC, 'info', 'none', 'oidcDiscovery'),
  route('GET', '/keys', OIDC, 'info', 'none', 'oidcKeys'),
  route('GET', '/logged-out', OIDC, 'info', 'none', 'oidcLoggedOut'),
];

/** Logins, tokens and their ends: the authentication function's. */
export const OIDC_AUTHENTICATION_ROUTES: readonly Route[] = [
  // The code flow: an auth request, a login page per primary method, the second factor, the callback with the code.
  route('GET', '/authorize', OIDC, 'authentication', 'none', 'oidcAuthorize'),
  route('POST', '/authorize', OIDC, 'authentication', 'none', 'oidcAuthorize'),
  route('GET', '/authorize/callback', OIDC, 'authentication', 'none', 'oidcAuthorizeCallback'),
  route('GET', '/login/password', OIDC, 'authentication', 'none', 'oidcLoginPage'),
  route('POST', '/login/password', OIDC, 'authentication', 'none', 'oidcLoginPassword'),
  route('GET', '/login/username', OIDC, 'authentication', 'none', 'oidcLoginPage'),
  route('POST', '/login/username', OIDC, 'authentication', 'none', 'oidcLoginPassword'),
  route('GET', '/login/cert', OIDC, 'authentication', 'none', 'oidcLoginPage'),
  route('POST', '/login/cert', OIDC, 'authentication', 'none', 'oidcLoginCert'),
  route('GET', '/login/ext-jwt', OIDC, 'authentication', 'none', 'oidcLoginPage'),
  route('POST', '/login/ext-jwt', OIDC, 'authentication', 'none', 'oidcLoginExtJwt'),
  route('GET', '/login/auth-queries', OIDC, 'authentication', 'none', 'oidcAuthQueries'),
  route('POST', '/login/totp', OIDC, 'authentication', 'none', 'oidcLoginTotp'),
  route('POST', '/login/totp/enroll', OIDC, 'authentication', 'none', 'oidcTotpEnroll'),
  route('DELETE', '/login/totp/enroll', OIDC, 'authentication', 'none', 'oidcTotpEnrollDelete'),
  route('POST', '/login/totp/enroll/verify', OIDC, 'authentication', 'none', 'oidcTotpEnrollVerify'),

  // Tokens: the code's exchange, refresh and token exchange; revocation, logout and the library endpoints.
  route('POST', '/oauth/token', OIDC, 'authentication', 'none', 'oidcToken'),
  route('POST', '/revoke', OIDC, 'authentication', 'none', 'oidcRevoke'),
  route('GET', '/end_session', OIDC, 'authentication', 'none', 'oidcEndSession'),
  route('POST', '/end_session', OIDC, 'authentication', 'none', 'oidcEndSession'),
  route('GET', '/userinfo', OIDC, 'authentication', 'none', 'oidcUserInfo'),
  route('POST', '/userinfo', OIDC, 'authentication', 'none', 'oidcUserInfo'),
  route('POST', '/oauth/introspect', OIDC, 'authentication', 'none', 'oidcIntrospect'),
];

export const OIDC_ROUTES: readonly Route[] = [...OIDC_INFO_ROUTES, ...OIDC_AUTHENTICATION_ROUTES];
