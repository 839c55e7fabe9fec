/**
 * Encrypts small secrets for storage (TOTP seeds) with envelope encryption: each secret gets its own AES-256-GCM data
 * key, itself encrypted by a key the table never holds (KMS in AWS, a local key file in `npm start`). `context` is
 * bound into the ciphertext (the owning identity's id), so a sealed secret copied onto another item does not open.
 */
export interface SecretBox {
  seal(plaintext: Uint8Array, context: string): Promise<string>;
  open(sealed: string, context: string): Promise<Uint8Array>;
}
