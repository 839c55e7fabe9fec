import { chmodSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Modes of the data directory and everything in it: its owner's alone. It holds the network's keys, the table with
 * every session and a pending admin's enrollment token; the process umask (typically 022) would let any local user
 * read them.
 */
export const PRIVATE_DIRECTORY_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** The umask of a child that writes into it (DynamoDB Local), so what it creates later is private too. */
export const PRIVATE_UMASK = 0o077;

/**
 * Makes `directory` (created if missing) and everything under it private: directories 0700, files 0600. A directory
 * created before, by an earlier version or by hand, is tightened on every start, not only a new one created private.
 */
export function privateDirectory(directory: string): string {
  mkdirSync(directory, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  tighten(directory);
  return directory;
}

function tighten(directory: string): void {
  chmodSync(directory, PRIVATE_DIRECTORY_MODE);
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) tighten(path);
    else if (entry.isFile()) chmodSync(path, PRIVATE_FILE_MODE);
  }
}
