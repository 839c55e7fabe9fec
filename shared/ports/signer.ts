import type { KeyObject } from 'node:crypto';

/**
 * A private key the controller can sign with: ECDSA P-256 with SHA-256. The network root CA and the signing CA are
 * each one Signer (`signers.ts`), backed by KMS in AWS (never held) and by a key file locally; the server key is a
 * {@link ServerKey}.
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

/**
 * The key of the controller's TLS server certificate, which also signs every enrollment JWT: an SDK trusts the
 * controller it enrolls with only when the JWT verifies with the public key of the certificate the TLS handshake
 * presents. A TLS server (the local one, ACM) needs the private key itself, so unlike the CA keys it is held: a key
 * file locally, a Secrets Manager secret under a customer KMS key in AWS.
 */
export interface ServerKey extends Signer {
  /** The private key as PKCS#8 PEM, for the TLS server (never logged, never returned by the API). */
  privateKeyPem(): Promise<string>;
}

/** The network's keys: the two CA keys and the server key. */
export interface Signers {
  readonly rootCa: Signer;
  readonly signingCa: Signer;
  readonly server: ServerKey;
}

export type SignerRole = keyof Signers;

export const SIGNER_ROLES: readonly SignerRole[] = ['rootCa', 'signingCa', 'server'];

/** A P-256 signature's r and s are 32 bytes each. */
export const P256_COORDINATE_BYTES = 32;
