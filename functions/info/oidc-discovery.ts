import type { HttpResult } from '#shared/http/http-result.ts';
import type { Operation } from '#shared/http/operation.ts';
import { oidcIssuerOf } from '#shared/oidc/oidc-tokens.ts';
import { publicJwk } from '#shared/pki/enrollment-jwt.ts';

/** The login endpoints the reference adds to the standard document (`openziti_endpoints`), under the issuer. */
const OPENZITI_ENDPOINTS = {
  password: '/login/password',
  cert: '/login/cert',
  ext_jwt: '/login/ext-jwt',
  totp: '/login/totp',
  totp_enroll: '/login/totp/enroll',
  totp_enroll_verify: '/login/totp/enroll/verify',
  auth_queries: '/login/auth-queries',
} as const;

/** Plain JSON, as an OAuth server answers (no `{data, meta}` envelope), cacheable for a few minutes. */
function json(body: unknown, maxAgeSeconds: number): HttpResult {
  return { statusCode: 200, body, headers: { 'cache-control': `public, max-age=${maxAgeSeconds}` } };
}

/**
 * `GET /oidc/.well-known/openid-configuration` (and at the root): the provider's metadata for the address the request
 * reached, the reference's fields (`docs/oidc-design.md`, A), `openziti_endpoints` included.
 */
export const oidcDiscovery: Operation = async (request) => {
  const issuer = oidcIssuerOf(request.baseUrl);
  return json(
    {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      introspection_endpoint: `${issuer}/oauth/introspect`,
      userinfo_endpoint: `${issuer}/userinfo`,
      revocation_endpoint: `${issuer}/revoke`,
      end_session_endpoint: `${issuer}/end_session`,
      jwks_uri: `${issuer}/keys`,
      scopes_supported: ['openid', 'offline_access'],
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:token-exchange'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
      request_object_signing_alg_values_supported: ['ES256'],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
      revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
      introspection_endpoint_auth_methods_supported: ['none', 'client_secret_basic'],
      claims_supported: ['sub', 'aud', 'exp', 'iat', 'iss', 'auth_time', 'nonce', 'acr', 'amr', 'azp', 'name'],
      code_challenge_methods_supported: ['S256'],
      ui_locales_supported: ['en'],
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      openziti_endpoints: Object.fromEntries(
        Object.entries(OPENZITI_ENDPOINTS).map(([name, path]) => [name, `${issuer}${path}`]),
      ),
    },
    300,
  );
};

/** `GET /oidc/keys`: the JWKS of the key every token of the provider is signed with (the server key). */
export const oidcKeys: Operation = async (_request, deps) => {
  const jwk = await publicJwk(deps.signers.server);
  return json({ keys: [jwk] }, 300);
};

/** `GET /oidc/logged-out`: where a logout's redirect ends when the client named none. */
export const oidcLoggedOut: Operation = async () => ({
  statusCode: 200,
  body: '<!DOCTYPE html><html><head><title>Signed out</title></head><body><p>You are signed out.</p></body></html>',
  headers: { 'content-type': 'text/html; charset=utf-8' },
});
