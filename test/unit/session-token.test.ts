import { describe, expect, it } from 'vitest';
import { hashToken, idsOfToken, newSessionToken } from '#shared/auth/session-token.ts';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/;

describe('API session tokens', () => {
  it('carry the identity id after a random UUID, whatever characters the id has', () => {
    for (const id of ['aB3.x-Yz09', 'default-admin', 'id with spaces/and#hash', 'ü-ñ.日本']) {
      const token = newSessionToken(id);
      expect(token).toMatch(new RegExp(`^${UUID.source}\\.[A-Za-z0-9_-]+$`));
      expect(idsOfToken(token)).toEqual({ identityId: id });
    }
  });

  it('carry the authenticator that opened the session after the identity, when one did', () => {
    for (const [identityId, authenticatorId] of [
      ['aB3.x-Yz09', 'c.d-1'],
      ['ü-ñ.日本', 'auth/with#hash'],
    ] as const) {
      const token = newSessionToken(identityId, authenticatorId);
      expect(token).toMatch(new RegExp(`^${UUID.source}\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`));
      expect(idsOfToken(token)).toEqual({ identityId, authenticatorId });
    }
  });

  it('are new each time, and hashed whole (the carried ids are part of what is hashed)', () => {
    const first = newSessionToken('same', 'auth');
    const second = newSessionToken('same', 'auth');
    expect(first).not.toBe(second);
    const [uuid, identity] = first.split('.');
    expect(hashToken(first)).not.toBe(hashToken(uuid!));
    expect(hashToken(first)).not.toBe(hashToken(`${uuid}.${identity}`));
    expect(hashToken(first)).toMatch(/^[0-9a-f]{64}$/);
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
