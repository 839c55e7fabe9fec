import { randomBytes, randomUUID } from 'node:crypto';

// The reference controller's shortid alphabet: ids are 9-10 characters of [0-9a-zA-Z.-]. Ours are always 10.
const ID_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-';

/** A new entity or request id: 10 characters, 60 random bits. */
export function newId(): string {
  const bytes = randomBytes(10);
  let id = '';
  // 64 symbols, so the low six bits of each byte pick one without bias.
  for (const byte of bytes) id += ID_ALPHABET[byte & 63];
  // A leading '.' or '-' reads badly in URLs and CLIs; the reference never starts ids with them either.
  return /^[.-]/.test(id) ? `a${id.slice(1)}` : id;
}

/** A new secret token (API session token, enrollment token): a random UUIDv4 as the reference issues. */
export function newToken(): string {
  return randomUUID();
}

/**
 * The id of this deployment as a controller. A serverless deployment is one controller whatever number of functions
 * and endpoints serve it, so the id is fixed: `GET /controllers` shows it, controller settings are kept under it (and
 * under `global`), and routers know the controller by it on the control channel.
 */
export const CONTROLLER_ID = 'controller';
