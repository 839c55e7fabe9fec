import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import type { KMSClient } from '@aws-sdk/client-kms';
import { type ClientSource, clientOf } from '../ports/aws-client.ts';
import type { Signer } from '../ports/signer.ts';
import { derToRawSignature } from './ecdsa-signature.ts';

/**
 * A Signer over an asymmetric KMS key (`ECC_NIST_P256`, `SIGN_VERIFY`): the digest is computed here and sent as
 * `MessageType: DIGEST` (no 4 KB message limit, nothing but 32 bytes leaves the function), one `Sign` call per
 * signature. The public key is fetched once per cold start.
 */
export function kmsSigner(source: ClientSource<KMSClient>, keyId: string): Signer {
  let publicKey: Promise<KeyObject> | undefined;
  const fetchPublicKey = async () => {
    const [client, { GetPublicKeyCommand }] = await Promise.all([clientOf(source), import('@aws-sdk/client-kms')]);
    const answer = await client.send(new GetPublicKeyCommand({ KeyId: keyId }));
    if (answer.KeySpec !== 'ECC_NIST_P256' || !answer.PublicKey) {
      throw new Error(`KMS key ${keyId} is ${answer.KeySpec ?? 'unknown'}, expected ECC_NIST_P256`);
    }
    return createPublicKey({ key: Buffer.from(answer.PublicKey), format: 'der', type: 'spki' });
  };
  return {
    keyId,
    async sign(data) {
      const digest = createHash('sha256').update(data).digest();
      const [client, { SignCommand }] = await Promise.all([clientOf(source), import('@aws-sdk/client-kms')]);
      const answer = await client.send(
        new SignCommand({ KeyId: keyId, Message: digest, MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' }),
      );
      if (!answer.Signature) throw new Error(`KMS answered no signature for key ${keyId}`);
      return derToRawSignature(answer.Signature);
    },
    publicKey() {
      publicKey ??= fetchPublicKey().catch((error: unknown) => {
        publicKey = undefined;
        throw error;
      });
      return publicKey;
    },
  };
}
