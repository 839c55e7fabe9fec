import { describe, expect, it } from 'vitest';
import { hashPassword, verifyAgainstNothing, verifyPassword } from '#shared/auth/password-hash.ts';

describe('password hashing', () => {
  it('stores argon2id with a random salt, so equal passwords hash differently', async () => {
    const first = await hashPassword('correct horse');
    const second = await hashPassword('correct horse');

    expect(first).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(first).not.toBe(second);
    expect(first).not.toContain('correct horse');
  });

  it('verifies the right password and refuses others', async () => {
    const hash = await hashPassword('correct horse');

    expect(await verifyPassword('correct horse', hash)).toBe(true);
    expect(await verifyPassword('correct horsE', hash)).toBe(false);
    expect(await verifyPassword('', hash)).toBe(false);
  });

  it('refuses malformed hashes instead of throwing', async () => {
    expect(await verifyPassword('x', 'plain-text')).toBe(false);
    expect(await verifyPassword('x', '$argon2id$v=19$m=1,t=1,p=1$$')).toBe(false);
  });

  it('spends a real check on unknown users and never succeeds', async () => {
    expect(await verifyAgainstNothing('anything')).toBe(false);
  });
});
