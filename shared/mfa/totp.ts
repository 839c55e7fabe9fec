import { createHash, randomBytes } from 'node:crypto';

/**
 * TOTP as authenticator apps and the reference controller compute it: RFC 6238, HMAC-SHA1, 6 digits, 30-second steps,
 * codes accepted two steps either side of now (the reference's window), each step at most once.
 */
const PERIOD_SECONDS = 30;
const WINDOW_STEPS = 2;
const SEED_BYTES = 20;
const RECOVERY_CODES = 20;
const RECOVERY_CODE_LENGTH = 6;
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The seed and recovery codes an enrollment keeps sealed. */
export interface TotpSecrets {
  /** Base32, as authenticator apps take it. */
  readonly seed: string;
  /** Unused recovery codes; each works once. */
  readonly recoveryCodes: readonly string[];
}

/** otplib, loaded by the first MFA operation: logins and most requests never need it. */
const otplib = () => import('otplib');

export async function newTotpSecrets(): Promise<TotpSecrets> {
  const { generateSecret } = await otplib();
  return { seed: generateSecret({ length: SEED_BYTES }), recoveryCodes: newRecoveryCodes() };
}

/** Twenty codes of six base32 characters (the reference's form, short enough for the MFA prompt's 4 to 6). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () =>
    [...randomBytes(RECOVERY_CODE_LENGTH)].map((byte) => BASE32[byte & 31]).join(''),
  );
}

/** The `otpauth://` URL an authenticator app enrolls from (the QR code encodes it). */
export async function provisioningUrl(issuer: string, accountName: string, seed: string): Promise<string> {
  const { generateURI } = await otplib();
  return generateURI({ issuer, label: accountName, secret: seed, period: PERIOD_SECONDS, digits: 6 });
}

const TOTP_CODE = /^[0-9]{6}$/;

/**
 * The time step of `code` if it is a current TOTP code of `seed` from a step after `afterTimeStep`; undefined
 * otherwise (wrong, stale, or already used).
 */
export async function acceptedTimeStep(
  seed: string,
  code: string,
  now: Date,
  afterTimeStep: number,
): Promise<number | undefined> {
  if (!TOTP_CODE.test(code)) return undefined;
  const tolerance = WINDOW_STEPS * PERIOD_SECONDS;
  const { verify } = await otplib();
  const result = await verify({
    secret: seed,
    token: code,
    epoch: Math.floor(now.getTime() / 1000),
    period: PERIOD_SECONDS,
    epochTolerance: tolerance,
    ...(afterTimeStep > 0 ? { afterTimeStep } : {}),
  });
  return result.valid && 'timeStep' in result ? result.timeStep : undefined;
}

/**
 * The recovery codes left once `code` is used, or undefined when it is none of them. Codes are compared by their
 * hashes, so the comparison takes the same time whichever code (if any) matches.
 */
export function withoutRecoveryCode(codes: readonly string[], code: string): string[] | undefined {
  const wanted = digest(code.trim().toUpperCase());
  let match = -1;
  codes.forEach((candidate, index) => {
    if (digest(candidate).equals(wanted)) match = index;
  });
  return match < 0 ? undefined : codes.filter((_, index) => index !== match);
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
