import { argon2, randomBytes, timingSafeEqual } from 'node:crypto';

// OWASP's argon2id baseline (19 MiB, 2 passes, 1 lane): about 45 ms on one Lambda vCPU, far costlier to guess at scale.
interface Argon2Params {
  readonly memory: number;
  readonly passes: number;
  readonly parallelism: number;
  readonly tagLength: number;
}

const PARAMS: Argon2Params = { memory: 19_456, passes: 2, parallelism: 1, tagLength: 32 };
const SALT_BYTES = 16;

function derive(password: string, salt: Buffer, params: Argon2Params): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    argon2('argon2id', { message: password, nonce: salt, ...params }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/** Hashes a password with argon2id and a random salt, as a PHC string so its parameters can change later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, PARAMS);
  return `$argon2id$v=19$m=${PARAMS.memory},t=${PARAMS.passes},p=${PARAMS.parallelism}$${salt.toString('base64')}$${key.toString('base64')}`;
}

const PHC = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

/** Checks a password against a PHC string in constant time; false for any malformed hash. */
export async function verifyPassword(password: string, phc: string): Promise<boolean> {
  const match = PHC.exec(phc);
  if (!match) return false;
  const [, memory, passes, parallelism, salt, expectedBase64] = match;
  const expected = Buffer.from(expectedBase64!, 'base64');
  const actual = await derive(password, Buffer.from(salt!, 'base64'), {
    memory: Number(memory),
    passes: Number(passes),
    parallelism: Number(parallelism),
    tagLength: expected.length,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

let dummyHash: Promise<string> | undefined;

/**
 * Spends the same time as a real check when there is no authenticator to check against, so response times do not
 * reveal which usernames exist.
 */
export async function verifyAgainstNothing(password: string): Promise<false> {
  dummyHash ??= hashPassword('no such user');
  await verifyPassword(password, await dummyHash);
  return false;
}
