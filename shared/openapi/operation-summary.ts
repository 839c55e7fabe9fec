import type { Route } from '../routes/route.ts';

/** Words of path segments written as the APIs' prose writes them. */
const WORDS: Readonly<Record<string, string>> = {
  api: 'API',
  ca: 'CA',
  cas: 'CAs',
  jwt: 'JWT',
};

/**
 * Summaries of the operations whose name and path do not say what they do in the usual words of a collection
 * (listing, creating, reading, replacing, patching or deleting its entities, or listing what one of them relates to).
 */
export const WRITTEN_SUMMARIES: Readonly<Record<string, string>> = {
  listRoot: 'The controller version and the APIs it serves (as `/version`)',
  listVersion: 'The controller version and the APIs it serves',
  listSummary: 'Count the entities of every type',
  listWellKnownCas: 'The network CA certificates (EST cacerts, base64 PKCS#7)',
  listNetworkJWTs: 'The network JWTs routers and SDKs enroll with',
  detailSpecBody: 'The OpenAPI document of an API',
  authenticate: 'Log in (password, certificate or external JWT)',
  authenticateMfa: 'Complete a login with a TOTP or recovery code',
  getCurrentAPISession: "The caller's API session",
  deleteCurrentApiSession: "Log out: end the caller's API session",
  createTotpToken: 'Prove a fresh TOTP code (the token MFA posture responses carry)',
  listServiceUpdates: 'When the services the caller may use last changed',
  listCurrentApiSessionCertificates: "List the ephemeral certificates of the caller's API session",
  createCurrentApiSessionCertificate: "Issue an ephemeral certificate for the caller's API session",
  detailCurrentApiSessionCertificate: "Retrieve an ephemeral certificate of the caller's API session",
  deleteCurrentApiSessionCertificate: "Delete an ephemeral certificate of the caller's API session",
  getCurrentIdentity: "The caller's identity",
  getCurrentIdentityEdgeRouters: 'List the edge routers the caller may use',
  listCurrentIdentityAuthenticators: "List the caller's authenticators",
  detailCurrentIdentityAuthenticator: "Retrieve one of the caller's authenticators",
  updateCurrentIdentityAuthenticator: "Update all fields of one of the caller's authenticators",
  patchCurrentIdentityAuthenticator: "Update the given fields of one of the caller's authenticators",
  extendCurrentIdentityAuthenticator: "Extend one of the caller's certificates (a new certificate from a CSR)",
  extendVerifyCurrentIdentityAuthenticator: 'Confirm an extended certificate, retiring the old one',
  enrollMfa: 'Start TOTP MFA enrollment for the caller',
  detailMfa: "The caller's MFA enrollment",
  deleteMfa: "Remove the caller's MFA (with a code once it is verified)",
  verifyMfa: "Verify the caller's MFA enrollment with a first code",
  detailMfaQrCode: "The QR code (PNG) of the caller's MFA enrollment",
  detailMfaRecoveryCodes: "The caller's unused MFA recovery codes (with a TOTP code)",
  createMfaRecoveryCodes: "Replace the caller's MFA recovery codes with new ones",
  removeIdentityMfa: "Remove an identity's MFA (admin reset)",
  disableIdentity: 'Disable an identity for a time or until enabled',
  enableIdentity: 'Enable a disabled identity',
  getIdentityAuthenticators: 'List the authenticators of an identity',
  getIdentityEnrollments: 'List the enrollments of an identity',
  getIdentityFailedServiceRequests: 'List the failed service requests of an identity',
  getIdentityPostureData: 'The posture data an identity reported',
  getIdentityPolicyAdvice: 'Why an identity may or may not use a service',
  listIdentityServices: 'List the services an identity may use',
  listIdentityEdgeRouters: 'List the edge routers an identity may use',
  listIdentitysServiceConfigs: 'List the service config overrides of an identity',
  associateIdentitysServiceConfigs: 'Add service config overrides to an identity',
  disassociateIdentitysServiceConfigs: 'Remove service config overrides from an identity',
  updateIdentityTracing: "Start or stop tracing an identity's traffic",
  listServiceIdentities: 'List the identities that may use a service',
  listServiceEdgeRouters: 'List the edge routers that may carry a service',
  listEdgeRouterIdentities: 'List the identities that may use an edge router',
  listEdgeRouterServices: 'List the services an edge router may carry',
  detailControllerSettingEffective: 'Retrieve the settings that apply to a controller (its own, else the global ones)',
  updateControllerSetting: "Update all of a controller's own settings",
  patchControllerSetting: "Update the given fields of a controller's own settings",
  deleteControllerSetting: "Delete a controller's own settings (it follows the global ones again)",
  detailSessionRoutePath: 'The route path of a session',
  getCaJwt: 'The enrollment JWT of a CA',
  verifyCa: 'Verify a CA with a certificate it signed for its verification token',
  reEnrollAuthenticator: 'Turn an authenticator back into an enrollment',
  requestExtendAuthenticator: 'Ask an identity to extend its certificate',
  reEnrollEdgeRouter: 'Re-enroll an edge router (a new enrollment token)',
  refreshEnrollment: 'Refresh an enrollment (a new token and JWT)',
  enroll: 'Enroll with a token (the legacy form: `method` and `token` in the query)',
  enrollOtt: 'Enroll an identity with a one-time token and a CSR',
  enrollOttCa: 'Enroll an identity with a one-time token and a CA-issued certificate',
  enrollCa: 'Enroll an identity with a certificate of an auto-enrolling CA',
  enrollUpdb: 'Enroll an identity with a one-time token and a password',
  enrollErOtt: 'Enroll an edge router with its one-time token',
  enrollToken: "Enroll an identity with an external JWT signer's token",
  enrollmentChallenge: 'Sign a nonce with the enrollment key (proof the controller holds it)',
  extendRouterEnrollment: "Extend a router's certificates",
  getEnrollmentJwks: 'The keys enrollment JWTs are signed with (JWKS)',
  createPostureResponse: 'Report posture data',
  createPostureResponseBulk: 'Report several posture responses at once',
  checkDataIntegrity: 'Start a data integrity check',
  fixDataIntegrity: 'Start a data integrity check that repairs what it finds',
  dataIntegrityResults: 'The results of the latest data integrity check or fix',
  createDatabaseSnapshot: 'Take a database snapshot',
};

/** `external-jwt-signers` → `external JWT signers`. */
function phrase(segment: string): string {
  return segment
    .split('-')
    .map((word) => WORDS[word] ?? word)
    .join(' ');
}

function singular(words: string): string {
  if (words.endsWith('ies')) return `${words.slice(0, -3)}y`;
  if (words.endsWith('s')) return words.slice(0, -1);
  return words;
}

/** `an identity`, `a CA`: by the first letter, which is right for every entity name of the APIs. */
function withArticle(noun: string): string {
  return `${/^[aeiou]/i.test(noun) ? 'an' : 'a'} ${noun}`;
}

/** `listIdentityRoleAttributes` → `List identity role attributes`: the last resort, for a name nothing else covers. */
function fromName(operation: string): string {
  const words = operation.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The one-line summary of a route's operation in our OpenAPI documents: said for the operations whose name is a
 * collection's usual verb on `/{type}`, `/{type}/{id}` or `/{type}/{id}/{related}`, written out for the others, and
 * the name's words for an operation neither covers.
 */
export function operationSummary(route: Route): string {
  const written = WRITTEN_SUMMARIES[route.operation];
  if (written) return written;
  const segments = route.path.split('/').filter(Boolean);
  const [collection, id, related] = segments;
  const verb = /^[a-z]+/.exec(route.operation)?.[0];
  if (collection && segments.length === 1) {
    if (verb === 'list' && route.method === 'GET') return `List ${phrase(collection)}`;
    if (verb === 'create' && route.method === 'POST') return `Create ${withArticle(singular(phrase(collection)))}`;
  }
  if (collection && id === '{id}') {
    const entity = withArticle(singular(phrase(collection)));
    if (segments.length === 2) {
      const byVerb: Record<string, string> = {
        'detail GET': `Retrieve ${entity}`,
        'update PUT': `Update all fields of ${entity}`,
        'patch PATCH': `Update the given fields of ${entity}`,
        'delete DELETE': `Delete ${entity}`,
      };
      const summary = byVerb[`${verb} ${route.method}`];
      if (summary) return summary;
    }
    if (related && segments.length === 3 && verb === 'list' && route.method === 'GET') {
      return `List the ${phrase(related)} of ${entity}`;
    }
  }
  return fromName(route.operation);
}
