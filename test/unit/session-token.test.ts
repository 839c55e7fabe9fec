import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { derivedSessionToken, hashToken, idsOfToken, sessionToken } from '#shared/auth/session-token.ts';

const KEY = randomBytes(32);
/** The secret part: 43 characters of base64url, a SHA-256 MAC. */
const SECRET = /[A-Za-z0-9_-]{43}/;

describe('API session tokens', () => {
  it('carry the identity id after their secret part, whatever characters the id has', () => {
    for (const id of ['aB3.x-Yz09', 'default-admin', 'id with spaces/and#hash', 'ü-ñ.日本']) {
      const token = sessionToken(KEY, { sessionId: 'session-1', identityId: id });
      expect(token).toMatch(new RegExp(`^${SECRET.source}\\.[A-Za-z0-9_-]+$`));
      expect(idsOfToken(token)).toEqual({ identityId: id });
    }
  });

  it('carry the authenticator that opened the session after the identity, when one did', () => {
    for (const [identityId, authenticatorId] of [
      ['aB3.x-Yz09', 'c.d-1'],
      ['ü-ñ.日本', 'auth/with#hash'],
    ] as const) {
      const token = sessionToken(KEY, { sessionId: 'session-1', identityId, authenticatorId });
      expect(token).toMatch(new RegExp(`^${SECRET.source}\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`));
      expect(idsOfToken(token)).toEqual({ identityId, authenticatorId });
    }
  });

  it("make their secret the key's MAC of the session id: another session or another key gives another token", () => {
    const parts = { sessionId: 'aB3.x-Yz09', identityId: 'same', authenticatorId: 'auth' };
    const token = sessionToken(KEY, parts);
    expect(sessionToken(KEY, parts)).toBe(token);
    expect(sessionToken(KEY, { ...parts, sessionId: 'aB3.x-Yz0A' })).not.toBe(token);
    expect(sessionToken(randomBytes(32), parts)).not.toBe(token);
    // Not the bare MAC of the id: the input is labelled, so the key MACs nothing else alike.
    const bare = createHmac('sha256', KEY).update(parts.sessionId).digest('base64url');
    expect(token.split('.')[0]).not.toBe(bare);
  });

  it('are hashed whole (the carried ids are part of what is hashed)', () => {
    const token = sessionToken(KEY, { sessionId: 's', identityId: 'same', authenticatorId: 'auth' });
    const [secret, identity] = token.split('.');
    expect(hashToken(token)).not.toBe(hashToken(secret!));
    expect(hashToken(token)).not.toBe(hashToken(`${secret}.${identity}`));
    expect(hashToken(token)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('are derived again from the session only when its stored hash is of the derived token', () => {
    const parts = { sessionId: 's-1', identityId: 'i-1', authenticatorId: 'a-1' };
    const token = sessionToken(KEY, parts);
    expect(derivedSessionToken(KEY, { ...parts, tokenHash: hashToken(token) })).toBe(token);
    // A token of before (a random UUID as its secret), or one made under another server key: not derivable.
    const older = `8c1d4a52-3c3b-4f0e-9a43-3b1f2f0f7d11.${Buffer.from('i-1').toString('base64url')}`;
    expect(derivedSessionToken(KEY, { ...parts, tokenHash: hashToken(older) })).toBeUndefined();
    expect(derivedSessionToken(randomBytes(32), { ...parts, tokenHash: hashToken(token) })).toBeUndefined();
  });

  it('name nothing in the older form (a bare UUID) or in anything malformed', () => {
    expect(idsOfToken('8c1d4a52-3c3b-4f0e-9a43-3b1f2f0f7d11')).toBeUndefined();
    expect(idsOfToken('8c1d4a52-3c3b-4f0e-9a43-3b1f2f0f7d11.')).toBeUndefined();
    expect(idsOfToken('8c1d4a52-3c3b-4f0e-9a43-3b1f2f0f7d11.YQ.')).toBeUndefined();
    expect(idsOfToken('8c1d4a52-3c3b-4f0e-9a43-3b1f2f0f7d11.YQ.Yg.Yw')).toBeUndefined();
    expect(idsOfToken('x.not base64!')).toBeUndefined();
    expect(idsOfToken('x.YQ.not base64!')).toBeUndefined();
    expect(idsOfToken('')).toBeUndefined();
  });
});
