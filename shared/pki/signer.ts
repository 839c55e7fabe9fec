import type { KeyObject } from 'node:crypto';

/**
 * A private key the controller can sign with but never holds in AWS: ECDSA P-256 with SHA-256. The network root CA,
 * the signing CA and the enrollment JWT key are each one Signer (`signers.ts`), backed by KMS in AWS and by a key file
 * locally.
 */
export interface Signer {
  /** Where the key lives, for logs and errors: a KMS key id or `local:<name>`. */
  readonly keyId: string;
  /**
   * Signs `data` (hashed here with SHA-256) and answers the signature as raw r‖s, 64 bytes: what JWS `ES256` and
   * WebCrypto use. X.509 wants DER; @peculiar/x509 converts.
   */
  sign(data: Uint8Array): Promise<Uint8Array>;
  /** The public half, fetched once and kept. */
  publicKey(): Promise<KeyObject>;
}

/** The three keys of the network's PKI. */
export interface Signers {
  readonly rootCa: Signer;
  readonly signingCa: Signer;
  readonly enrollment: Signer;
}

export type SignerRole = keyof Signers;

export const SIGNER_ROLES: readonly SignerRole[] = ['rootCa', 'signingCa', 'enrollment'];

/** A P-256 signature's r and s are 32 bytes each. */
export const P256_COORDINATE_BYTES = 32;
