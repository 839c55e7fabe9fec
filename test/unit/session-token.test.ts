import { describe, expect, it } from 'vitest';
import { hashToken, identityIdOfToken, newSessionToken } from '#shared/auth/session-token.ts';

describe('API session tokens', () => {
  it('carry the identity id after a random UUID, whatever characters the id has', () => {
    for (const id of ['aB3.x-Yz09', 'default-admin', 'id with spaces/and#hash', 'ü-ñ.日本']) {
      const token = newSessionToken(id);
      expect(token).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.[A-Za-z0-9_-]+$/);
      expect(identityIdOfToken(token)).toBe(id);
    }
  });

  it('are new each time, and hashed whole (the carried id is part of what is hashed)', () => {
    const first = newSessionToken('same');
    const second = newSessionToken('same');
    expect(first).not.toBe(second);
    const [uuid] = first.split('.');
    expect(hashToken(first)).not.toBe(hashToken(uuid!));
    expect(hashToken(first)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('name no identity in the older form (a bare UUID) or in anything malformed', () => {
    expect(identityIdOfToken('8c1d4a52-3c3b-4f0e-9a43-3b1f2f0f7d11')).toBeUndefined();
    expect(identityIdOfToken('8c1d4a52-3c3b-4f0e-9a43-3b1f2f0f7d11.')).toBeUndefined();
    expect(identityIdOfToken('x.not base64!')).toBeUndefined();
    expect(identityIdOfToken('')).toBeUndefined();
  });
});
