import * as z from 'zod';
import { baseDocumentShape } from '../entities/base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from '../entities/entity-definition.ts';
import { API_SESSIONS_COLLECTION } from '../store/api-session-items.ts';

export const apiSessionSchema = z.object({
  ...baseDocumentShape,
  identityId: z.string(),
  authenticatorId: z.string(),
  ipAddress: z.string(),
  configTypes: z.array(z.string()),
  isMfaRequired: z.boolean(),
  isMfaComplete: z.boolean(),
  isCertExtendable: z.boolean().optional(),
  isCertExtendRequested: z.boolean(),
  isCertKeyRollRequested: z.boolean(),
  improperClientCertChain: z.boolean(),
  lastActivityAt: z.string(),
  /**
   * The second factors a partial session still waits for (`isMfaRequired` and not `isMfaComplete`): a TOTP code, an
   * external JWT, or both. Kept apart because each is given on its own; never shown.
   */
  totpPending: z.boolean().optional(),
  extJwtPending: z.boolean().optional(),
  /**
   * Whether a Dial/Bind session or posture data was ever stored under it: ending it looks for those only then, and a
   * session create sets the flag only when it is not set yet. Never shown.
   */
  hasSessions: z.boolean().optional(),
  hasPosture: z.boolean().optional(),
  /**
   * Whether `authenticatorId` names a stored authenticator (a password or certificate login; an ext-jwt login names its
   * signer, a CA's external id claim no authenticator at all): the session then ends with that authenticator
   * (`isRevoked`). Absent on sessions stored before, which end only with their identity. Never shown.
   */
  endsWithAuthenticator: z.boolean().optional(),
  /**
   * The API the session was opened on (`POST /authenticate` of the client or the management API). Only a session
   * opened on the management API acts as an admin, and only one opened on the client API is ever sent to routers
   * (`router-api-sessions.ts`): the tokens routers hold, which one stolen router gives away, never carry admin power.
   * Absent on sessions stored before it was kept: those are taken as the client API's (every router was sent them).
   * Never shown.
   */
  openedOn: z.enum(['client', 'management']).optional(),
  /**
   * How the session was opened: `oidc` by the OIDC provider's code or token exchange (its tokens are JWTs the routers
   * verify themselves, never sent to them); absent for POST /authenticate's.
   */
  kind: z.enum(['legacy', 'oidc']).optional(),
  /**
   * An OIDC session's one live refresh token, by its `jti`: set by the code's exchange, replaced by each refresh in the
   * same conditional write that refreshes the session's activity, so a refresh token is good once and a refresh costs
   * no more writes than a legacy session's touch. Never shown.
   */
  refreshJti: z.string().optional(),
  /** sha256 of the token: the key of the session item, and the only form of the token at rest. */
  tokenHash: z.string(),
});
export type ApiSession = z.infer<typeof apiSessionSchema>;
/** The APIs a session is opened on: those that serve `POST /authenticate` (the fabric API uses the management API's). */
export type SessionApi = NonNullable<ApiSession['openedOn']>;

export { API_SESSIONS_COLLECTION };

/**
 * API sessions, for their label, schema and filterable fields: they are keyed by their token's hash (see
 * `api-session-store.ts`), not by the kit's entity layout, so neither the kit's writes nor its lists handle them
 * (`api-session-list.ts` pages them).
 */
export const apiSessions: EntityDefinition<ApiSession> = {
  collection: API_SESSIONS_COLLECTION,
  label: 'API session',
  schema: apiSessionSchema,
  unique: [],
  readsById: false,
  filterable: {
    ...BASE_FILTERABLE,
    identityId: 'string',
    ipAddress: 'string',
    lastActivityAt: 'datetime',
    isMfaRequired: 'boolean',
    isMfaComplete: 'boolean',
    authenticatorId: 'string',
  },
};
