/**
 * The API's error codes with their HTTP status and our default message. Codes and statuses follow the reference
 * controller so existing clients can branch on them; the messages are our own.
 */
export const ERROR_CODES = {
  NOT_FOUND: { status: 404, message: 'The requested resource does not exist or is no longer available.' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'This resource does not support the HTTP method used.' },
  UNHANDLED: { status: 500, message: 'The controller failed to process the request; the fault has been logged.' },
  RESPONSE_TOO_LARGE: { status: 500, message: 'The answer is larger than the front door can carry; see cause.' },
  COULD_NOT_VALIDATE: { status: 400, message: 'The request is invalid; see cause for the field at fault.' },
  COULD_NOT_PARSE_BODY: { status: 400, message: 'The request body is not valid JSON.' },
  REQUEST_ENTITY_TOO_LARGE: { status: 413, message: 'The request body is larger than the 1 MiB limit.' },
  UNAUTHORIZED: { status: 401, message: 'The request needs a valid API session with the required access.' },
  INVALID_AUTH: { status: 401, message: 'The credentials supplied are not valid.' },
  INVALID_FILTER: { status: 400, message: 'The filter expression is invalid; see cause for where.' },
  INVALID_PAGINATION: { status: 400, message: 'The pagination parameters are invalid; see cause.' },
  INVALID_SORT_IDENTIFIER: { status: 400, message: 'The sort expression names a field that cannot be sorted on.' },
  CAN_NOT_DELETE_REFERENCED_ENTITY: { status: 409, message: 'The resource is still referenced and cannot be deleted.' },
  ENTITY_CAN_NOT_BE_UPDATED: { status: 400, message: 'This resource is managed by the system and cannot be changed.' },
  ENTITY_CAN_NOT_BE_DELETED: { status: 400, message: 'This resource is managed by the system and cannot be deleted.' },
  MAX_AUTHENTICATOR_METHODS_REACHED: {
    status: 409,
    message: 'The identity already has an authenticator of this method.',
  },
  MFA_EXISTS: { status: 409, message: 'The identity already has MFA; remove it before enrolling again.' },
  MFA_ENROLLMENT_NOT_STARTED: { status: 404, message: 'The identity has not started an MFA enrollment.' },
  // The reference answers 400; our specification lists an invalid MFA code among the 401s, and it wins.
  MFA_INVALID_TOKEN: { status: 401, message: 'The MFA code is not valid.' },
  MFA_NOT_ENROLLED: { status: 409, message: 'The identity has no MFA enrolled.' },
  // The OIDC provider's wrong second factor (`/oidc/login/totp`, its enrollment's verify): the reference's code and 400.
  'INVALID TOTP CODE': { status: 400, message: 'The TOTP code is not valid.' },
  CAN_NOT_UPDATE_AUTHENTICATOR: { status: 409, message: 'This authenticator cannot be changed this way.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests of this kind; try again later.' },
  SERVER_TOO_MANY_REQUESTS: { status: 429, message: 'The controller is busy; try again later.' },
  TIMEOUT: { status: 503, message: 'The request took too long to process.' },
  MISDIRECTED_REQUEST: {
    status: 421,
    message: 'This address takes no client certificates; send the request to the address in ziti-ctrl-address.',
  },
  INVALID_POSTURE: { status: 409, message: 'The posture checks of the service policies granting the service failed.' },
  NO_EDGE_ROUTERS_AVAILABLE: {
    status: 400,
    message: 'No edge router is available to both the identity and the service.',
  },
  INVALID_ENROLLMENT_TOKEN: { status: 400, message: 'The enrollment token is not valid (unknown or already used).' },
  ENROLLMENT_EXPIRED: { status: 400, message: 'The enrollment has expired.' },
  INVALID_ENROLL_METHOD: { status: 400, message: 'The enrollment method does not match the token or is not known.' },
  COULD_NOT_PROCESS_CSR: { status: 400, message: 'The certificate signing request could not be processed.' },
  ENROLLMENT_EXISTS: { status: 409, message: 'The identity already has an outstanding enrollment of this method.' },
  CERT_IN_USE: { status: 409, message: 'The certificate is already used by another authenticator.' },
  ENROLLMENT_CA_NOT_VALID: { status: 400, message: "The enrollment's CA is missing, unverified or not enabled." },
  CERTIFICATE_FAILED_VALIDATION: { status: 400, message: 'The certificate does not chain to the expected CA.' },
  CERT_FAILED_VALIDATION: { status: 400, message: 'The certificate does not chain to any CA that enrolls.' },
  ENROLLMENT_NO_VALID_CAS: { status: 400, message: 'No verified CA has auto-enrollment enabled.' },
  MISSING_CERT_CLAIM: { status: 400, message: "The certificate does not carry the CA's external id claim." },
  CA_ALREADY_VERIFIED: { status: 409, message: 'The CA is already verified.' },
  EXPECTED_PEM_CERTIFICATE: { status: 400, message: 'The body must be a PEM certificate.' },
  INVALID_COMMON_NAME: { status: 400, message: "The certificate's common name is not the CA's verification token." },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
