import * as z from 'zod';
import type { Mfa } from '../entities/mfa.ts';
import type { Deps } from '../ports/deps.ts';
import type { Stored } from '../store/entity-store.ts';
import { acceptedTimeStep, type TotpSecrets, withoutRecoveryCode } from './totp.ts';

const secretsSchema = z.object({ seed: z.string().min(16), recoveryCodes: z.array(z.string()) });

/** Seals an enrollment's seed and recovery codes for storage, bound to its identity. */
export async function sealSecrets(deps: Deps, identityId: string, secrets: TotpSecrets): Promise<string> {
  return deps.secretBox.seal(new TextEncoder().encode(JSON.stringify(secrets)), identityId);
}

/** The seed and recovery codes of a stored enrollment. */
export async function openSecrets(deps: Deps, mfa: Mfa): Promise<TotpSecrets> {
  const opened = await deps.secretBox.open(mfa.sealed, mfa.identityId);
  return secretsSchema.parse(JSON.parse(new TextDecoder().decode(opened)));
}

/** Which kinds of code a request takes: TOTP only (verify, viewing recovery codes) or a recovery code too. */
export type CodeKinds = 'totp' | 'totp-or-recovery';

/** An enrollment once a code is used up, with its opened secrets (for a caller that changes them too). */
export interface UsedCode {
  readonly doc: Mfa;
  readonly secrets: TotpSecrets;
}

/**
 * The enrollment after `code` is used up, or undefined when it is not a code it accepts now. A TOTP code moves
 * `lastTimeStep`, a recovery code leaves the sealed list. The caller writes the result as a version-checked replace,
 * so two requests racing with one code cannot both succeed (the loser retries, and then finds the code used).
 */
export async function useCode(
  deps: Deps,
  stored: Stored<Mfa>,
  code: string,
  kinds: CodeKinds,
): Promise<UsedCode | undefined> {
  const secrets = await openSecrets(deps, stored.doc);
  const now = deps.now();
  const updatedAt = now.toISOString();
  const step = await acceptedTimeStep(secrets.seed, code.trim(), now, stored.doc.lastTimeStep);
  if (step !== undefined) return { doc: { ...stored.doc, lastTimeStep: step, updatedAt }, secrets };
  if (kinds === 'totp') return undefined;
  const remaining = withoutRecoveryCode(secrets.recoveryCodes, code);
  if (!remaining) return undefined;
  const left = { seed: secrets.seed, recoveryCodes: remaining };
  return {
    doc: { ...stored.doc, sealed: await sealSecrets(deps, stored.doc.identityId, left), updatedAt },
    secrets: left,
  };
}
