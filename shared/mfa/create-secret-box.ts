import type { ControllerConfig } from '../config.ts';
import { madeOnFirstCall } from '../ports/aws-client.ts';
import type { SecretBox } from '../ports/secret-box.ts';
import { fileSecretBox, kmsSecretBox, memorySecretBox } from './secret-box.ts';

/** The secret box the configuration places; nothing is read or called until a secret is sealed or opened. */
export function createSecretBox(config: ControllerConfig): SecretBox {
  const key = config.secretKey;
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
    case 'none': {
      const refuse = async (): Promise<never> => {
        throw new Error('this function has no secret key: the stack grants it only to the functions that need it');
      };
      return { seal: refuse, open: refuse };
    }
  }
}
