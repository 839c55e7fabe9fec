import type { ControllerConfig } from '../config.ts';
import { onceUntilRejected } from '../once-until-rejected.ts';
import { madeOnFirstCall } from '../ports/aws-client.ts';
import type { SecretBox } from '../ports/secret-box.ts';

/**
 * The secret box the configuration places; nothing is read or called until a secret is sealed or opened, and the box
 * itself (its ciphers, its key handling) loads with that first call: most requests of most functions never seal or
 * open a secret, so it is no part of their cold start.
 */
export function createSecretBox(config: ControllerConfig): SecretBox {
  const key = config.secretKey;
  if (key.kind === 'none') {
    const refuse = async (): Promise<never> => {
      throw new Error('this function has no secret key: the stack grants it only to the functions that need it');
    };
    return { seal: refuse, open: refuse };
  }
  const box = onceUntilRejected(() =>
    import('./secret-box.ts').then(({ fileSecretBox, kmsSecretBox, memorySecretBox }) => {
      switch (key.kind) {
        case 'kms':
          return kmsSecretBox(
            madeOnFirstCall(async () => new (await import('@aws-sdk/client-kms')).KMSClient({ region: config.region })),
            key.keyId,
          );
        case 'files':
          return fileSecretBox(key.directory);
        case 'memory':
          return memorySecretBox();
      }
    }),
  );
  return {
    seal: async (plaintext, context) => (await box()).seal(plaintext, context),
    open: async (sealed, context) => (await box()).open(sealed, context),
  };
}
