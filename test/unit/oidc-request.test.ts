import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientIdOf, oidcParams } from '#functions/authentication/oidc/oidc-request.ts';
import type { OperationRequest } from '#shared/http/operation.ts';

/** A request of the provider as far as its parameters and client go. */
function requestWith(
  headers: Record<string, string>,
  rawBody: string | undefined,
  query: Record<string, string[]> = {},
): OperationRequest {
  return { headers, rawBody, body: undefined, query } as unknown as OperationRequest;
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const basic = (userAndSecret: string) => `Basic ${Buffer.from(userAndSecret).toString('base64')}`;

describe("the OIDC endpoints' parameters and client", () => {
  it('name the client by the Basic user (form-encoded, as zitadel sends it) before client_id', () => {
    const request = requestWith({ ...FORM, authorization: basic('nat%69ve:') }, 'client_id=openziti');

    expect(clientIdOf(request, oidcParams(request))).toBe('native');
    const malformed = requestWith({ authorization: basic('100%:') }, undefined);
    expect(clientIdOf(malformed, oidcParams(malformed))).toBe('100%');
  });

  it('take client_id when no Basic user is given, and nothing when neither is', () => {
    const named = requestWith(FORM, 'client_id=openziti&grant_type=refresh_token');
    const emptyUser = requestWith({ ...FORM, authorization: basic(':secret') }, 'client_id=native');
    const none = requestWith(FORM, 'grant_type=refresh_token');

    expect(clientIdOf(named, oidcParams(named))).toBe('openziti');
    expect(clientIdOf(emptyUser, oidcParams(emptyUser))).toBe('native');
    expect(clientIdOf(none, oidcParams(none))).toBeUndefined();
  });

  it('never throw, whatever the Authorization header and the form hold', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), fc.string({ maxLength: 200 }), (user, body) => {
        for (const authorization of [basic(user), `Basic ${user}`, user]) {
          const request = requestWith({ ...FORM, authorization }, body);
          const clientId = clientIdOf(request, oidcParams(request));
          expect(clientId === undefined || typeof clientId === 'string').toBe(true);
        }
      }),
    );
  });
});
