import { jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import type { Session } from '#shared/entities/session.ts';
import { memorySigner } from '#shared/pki/local-signer.ts';
import {
  isTokenOfSession,
  sessionTokenKeys,
  sessionTokenOf,
  signSessionJwt,
  storedSessionToken,
} from '#shared/pki/session-jwt.ts';

const signer = memorySigner('session-token-rebuild');
const PUBLIC = 'https://ctrl.example.net';

/** A session made at `baseUrl` as the create stores it: the signature, and the issuer when none is configured. */
async function madeAt(baseUrl: string, configured: boolean, createdAt = '2026-11-28T00:30:15.678Z') {
  const fields = {
    id: 'sess-0123456789ab',
    type: 'Bind' as const,
    serviceId: 'svc-1',
    identityId: 'ident-1',
    apiSessionId: 'api-1',
  };
  const token = await signSessionJwt(signer, { ...fields, issuedAt: new Date(createdAt), baseUrl });
  const session: Session = {
    ...fields,
    createdAt,
    updatedAt: createdAt,
    tags: {},
    servicePolicyIds: ['policy-1'],
    ...storedSessionToken(token, configured ? undefined : new URL(baseUrl).origin),
  };
  return { token, session };
}

describe('a session token rebuilt from what its session stores', () => {
  it('is the signed token, byte for byte, under a configured public base URL (no issuer stored)', async () => {
    const { token, session } = await madeAt(PUBLIC, true);
    expect(session).not.toHaveProperty('tokenIssuer');
    expect(session.tokenSignature).toBe(token.split('.')[2]);
    expect(sessionTokenOf(session, await sessionTokenKeys(signer, PUBLIC))).toBe(token);
    await jwtVerify(sessionTokenOf(session, await sessionTokenKeys(signer, PUBLIC)), await signer.publicKey());
  });

  it('keeps the issuer it was made at when none is configured, whatever address reads it', async () => {
    const { token, session } = await madeAt('https://localhost:8441/edge', false);
    expect(session.tokenIssuer).toBe('https://localhost:8441');
    expect(sessionTokenOf(session, await sessionTokenKeys(signer, 'https://127.0.0.1:9443'))).toBe(token);
  });

  it('shows a token stored whole as stored, and matches a sent token only as its reads show it', async () => {
    const { token, session } = await madeAt(PUBLIC, true);
    const { tokenSignature: _signature, ...older } = session;
    const legacy: Session = { ...older, token: 'opaque-legacy-token' };
    expect(sessionTokenOf(legacy, await sessionTokenKeys(signer, PUBLIC))).toBe('opaque-legacy-token');
    expect(isTokenOfSession(legacy, 'opaque-legacy-token', PUBLIC)).toBe(true);

    expect(isTokenOfSession(session, token, PUBLIC)).toBe(true);
    expect(isTokenOfSession(session, session.tokenSignature ?? '', PUBLIC)).toBe(false);
    expect(isTokenOfSession(session, `.${token.split('.').slice(1).join('.')}`, PUBLIC)).toBe(false);
    // Another session's claims before this signature, or this token under another issuer, are not it.
    const [header, , signature] = token.split('.');
    const { token: other } = await madeAt(PUBLIC, true, '2026-11-28T00:30:16.000Z');
    expect(isTokenOfSession(session, `${header}.${other.split('.')[1]}.${signature}`, PUBLIC)).toBe(false);
    expect(isTokenOfSession(session, token, 'https://elsewhere.example.net')).toBe(false);
  });
});
