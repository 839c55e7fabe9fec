/**
 * The operations anyone may call without an API session (`auth: 'none'` in the route table), and why each must be.
 *
 * cdk-nag's authorization rules for API Gateway (AwsSolutions-APIG4, AwsSolutions-COG4) look at `AWS::ApiGateway::Method`
 * resources, and this REST API has none: it is imported from one OpenAPI body (`rest-api-definition.ts`), so the
 * rules never see a method and there is nothing for them to report or to acknowledge. Every method is open to API
 * Gateway and the functions authenticate (API sessions, partial MFA sessions and admin rights are state in the table).
 * `test/cdk/anonymous-operations.test.ts` stands in for the rules: every route not listed here answers 401 without a
 * session, and every route listed here is one the route table marks anonymous.
 */
export const ANONYMOUS_OPERATIONS: Readonly<Record<string, string>> = {
  listRoot: 'the version document at the API root, which clients read before they log in',
  listVersion: 'the version document: SDKs and the CLI read it first, to find the APIs and their addresses',
  listEnumeratedCapabilities: 'what the controller can do, read before logging in, as the reference serves it',
  listSpecs: "the API's published OpenAPI documents, public in the reference",
  detailSpec: "the API's published OpenAPI documents, public in the reference",
  detailSpecBody: "the API's published OpenAPI documents, public in the reference",
  authenticate: 'where an API session begins (password, certificate or external JWT; throttled per address and user)',
  listExternalJwtSigners: 'a client picks the identity provider it will log in with before it has a session',
  listProtocols: 'the address of the API the caller already reached',
  listWellKnownCas: 'EST cacerts: the CAs an enrolling client must trust, fetched before it has any identity',
  listNetworkJWTs: "the network's JWT, which a new client starts from",
  getEnrollmentJwks: 'the public key enrollment JWTs are signed with, to verify a JWT before enrolling',
  enrollmentChallenge: 'signs a nonce with the server key, so a client can check the server before enrolling',
  enroll: 'enrollment, authorized by its one-time token (or CA-signed certificate), not by a session',
  enrollOtt: 'enrollment, authorized by its one-time token',
  enrollOttCa: "enrollment, authorized by its one-time token and the client's CA-issued certificate",
  enrollUpdb: 'enrollment, authorized by its one-time token',
  enrollCa: 'auto-enrollment, authorized by a certificate from a verified, auto-enrolling CA',
  enrollErOtt: "an edge router's enrollment, authorized by its one-time token",
  enrollToken: "enrollment, authorized by an external JWT signer's token",
  extendRouterEnrollment: 'a router renews its certificates, authorized by its current client certificate',
  // The OIDC provider: OpenID Connect's own endpoints, each checking the credential of its step itself.
  oidcDiscovery: "the OIDC provider's metadata, which clients read before they log in",
  oidcKeys: "the public key the OIDC provider's tokens are signed with",
  oidcLoggedOut: 'the page a logout ends on',
  oidcAuthorize: 'starts an OIDC login (an auth request with its PKCE challenge): nothing is granted until a login',
  oidcAuthorizeCallback: 'gives the code of an auth request whose login is complete, named by its unguessable id',
  oidcLoginPage: 'the login page of an auth request, named by its unguessable id',
  oidcLoginPassword: 'an OIDC login, by password (throttled and locked out as the legacy login)',
  oidcLoginCert: 'an OIDC login, by the TLS client certificate',
  oidcLoginExtJwt: "an OIDC login, by an external JWT signer's token",
  oidcAuthQueries: "the second factors an auth request's login still owes, named by its unguessable id",
  oidcLoginTotp: "an OIDC login's TOTP code, for the auth request its unguessable id names",
  oidcTotpEnroll: "a TOTP enrollment an auth request's login must make, for the auth request its id names",
  oidcTotpEnrollDelete: "drops the TOTP enrollment an auth request's login started",
  oidcTotpEnrollVerify: "confirms the TOTP enrollment of an auth request's login with a code",
  oidcToken: 'the token endpoint: authorized by the code and PKCE verifier, or the refresh token, it exchanges',
  oidcRevoke: 'revokes the token it is given (RFC 7009): holding the token is the authorization',
  oidcEndSession: 'a logout, authorized by the ID token hint it carries',
  oidcUserInfo: 'who an access token speaks for, authorized by that bearer token',
  oidcIntrospect: 'whether a token is active (RFC 7662), authorized by the token itself',
};
