import { KMSClient } from '@aws-sdk/client-kms';
import type { ControllerConfig } from '../config.ts';
import { kmsSigner } from './kms-signer.ts';
import { fileSigner, memorySigner } from './local-signer.ts';
import type { Signer, SignerRole, Signers } from './signer.ts';

/** The key file names under the local key directory. */
const FILE_NAMES: Readonly<Record<SignerRole, string>> = {
  rootCa: 'root-ca',
  signingCa: 'signing-ca',
  enrollment: 'enrollment',
};

function unavailable(role: SignerRole): Signer {
  const refuse = async (): Promise<never> => {
    throw new Error(`this function has no ${role} key: the stack grants PKI keys only to the functions that sign`);
  };
  return { keyId: `none:${role}`, sign: refuse, publicKey: refuse };
}

function each(make: (role: SignerRole) => Signer): Signers {
  return { rootCa: make('rootCa'), signingCa: make('signingCa'), enrollment: make('enrollment') };
}

/** The network's PKI keys as the configuration places them; nothing is read or called until a key is used. */
export function createSigners(config: ControllerConfig): Signers {
  const keys = config.pkiKeys;
  switch (keys.kind) {
    case 'kms': {
      const client = new KMSClient({ region: config.region });
      return each((role) => {
        const keyId = keys[role];
        return keyId ? kmsSigner(client, keyId) : unavailable(role);
      });
    }
    case 'files':
      return each((role) => fileSigner(keys.directory, FILE_NAMES[role]));
    case 'memory':
      return each((role) => memorySigner(FILE_NAMES[role]));
    case 'none':
      return each(unavailable);
  }
}
