import { createPrivateKey } from 'node:crypto';
import { traced } from '../log/tracing.ts';
import { onceUntilRejected } from '../once-until-rejected.ts';
import type { ServerKey } from '../ports/signer.ts';

/**
 * The server key in AWS: a PKCS#8 PEM in a Secrets Manager secret encrypted under a customer KMS key that only the
 * functions signing JWTs (and the bootstrap, which makes it) may use. Read once per cold start, then held in memory
 * like a local key; the secret is made and rotated by the bootstrap (`server-identity.ts`).
 */
export function secretServerKey(region: string | undefined, secretArn: string): ServerKey {
  // The SDK's Secrets Manager module loads with the first read, not with the function; a failed read is tried again.
  const read = onceUntilRejected(async () => {
    const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
    const answer = await traced(new SecretsManagerClient({ region })).send(
      new GetSecretValueCommand({ SecretId: secretArn }),
    );
    if (!answer.SecretString?.includes('PRIVATE KEY')) throw new Error('the server key secret holds no key yet');
    return answer.SecretString;
  });
  let key: ReturnType<typeof createPrivateKey> | undefined;
  const loaded = async () => {
    key ??= createPrivateKey(await read());
    return key;
  };
  // localSigner wants the key synchronously; the secret is read on first use and the signer made then.
  let signer: ServerKey | undefined;
  const ready = async () => {
    const held = await loaded();
    // The signer's code loads with the first signature, no part of a cold start.
    const { localSigner } = await import('./local-signer.ts');
    signer ??= localSigner(`secret:${secretArn}`, () => held);
    return signer;
  };
  return {
    keyId: `secret:${secretArn}`,
    sign: async (data) => (await ready()).sign(data),
    publicKey: async () => (await ready()).publicKey(),
    privateKeyPem: async () => (await ready()).privateKeyPem(),
  };
}
