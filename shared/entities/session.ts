import { createHash } from 'node:crypto';
import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';
import { DIAL_BIND } from './policies.ts';

/**
 * A session (Dial or Bind) of an API session for one service: a kit entity (`sessions#<id>`), so the management list
 * pages, filters and sorts it like any type, listed under its API session in GSI2 (`api-sessions#<apiSessionId>`).
 * Why that parent: a session lives exactly as long as its API session, and every way an API session ends (logout,
 * admin delete, expiry met by use or by the list, its identity disabled or deleted) goes through `endOps` in
 * `shared/auth/api-session-store.ts`, which then removes the sessions of that partition (`endSessionsOfApiSessions`).
 * No kit reference points at the API session (it is not a kit entity) nor at the service: a cascade would make
 * deleting a service or an identity one transaction per however many sessions they have.
 *
 * The token is a JWT naming the session (`shared/pki/session-jwt.ts`), the one a router accepts for a Dial or Bind.
 * The reference returns it on every read of the session (the client reads it back with detailSession), so it is no
 * secret at rest here any more than there. Only its signature is stored (`sessionTokenOf` rebuilds the rest from the
 * session's own fields): the whole JWT, copied into the filter record too, took a fresh Dial past a KB an item.
 * Filters on `token` compare that signature (`functions/sessions/token-filter.ts` takes a whole token to its own).
 */
export const sessionSchema = z.object({
  ...baseDocumentShape,
  /** The whole token, as sessions made before only the signature was stored keep it. */
  token: z.string().optional(),
  /** The token's signature (base64url): the part that cannot be rebuilt. */
  tokenSignature: z.string().optional(),
  /** The token's `iss`, when no public base URL is configured to give it back (`storedSessionToken`). */
  tokenIssuer: z.string().optional(),
  type: z.enum(DIAL_BIND),
  identityId: z.string(),
  apiSessionId: z.string(),
  serviceId: z.string(),
  /** The service policies that granted it and whose posture checks passed (the management view's `servicePolicies`). */
  servicePolicyIds: z.array(z.string()),
});
export type Session = z.infer<typeof sessionSchema>;

export const SESSIONS_COLLECTION = 'sessions';

export const sessions: EntityDefinition<Session> = {
  collection: SESSIONS_COLLECTION,
  label: 'session',
  schema: sessionSchema,
  unique: [],
  parentOf: (doc) => ({ collection: 'api-sessions', id: doc.apiSessionId }),
  filterable: {
    ...BASE_FILTERABLE,
    // The signature stands for the token it ends: unique to it, and all the record keeps of it.
    token: { aliasOf: 'tokenSignature' },
    tokenSignature: 'string',
    type: 'string',
    identityId: 'string',
    apiSessionId: 'string',
    serviceId: 'string',
  },
};

/**
 * The id of the session of an API session for a service and type: the reference hands back the existing session
 * when the same API session asks again (its session cache by API session, type and service), so the id is derived
 * from the three and a repeated create finds the stored one.
 */
export function sessionIdFor(apiSessionId: string, type: string, serviceId: string): string {
  return createHash('sha256').update(`${apiSessionId}\n${type}\n${serviceId}`).digest('base64url').slice(0, 16);
}
