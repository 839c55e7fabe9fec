import type { ControllerConfig } from '../config.ts';
import { onceUntilRejected } from '../once-until-rejected.ts';
import { madeOnFirstCall } from '../ports/aws-client.ts';
import type { ServerKey, Signer, SignerRole, Signers } from '../ports/signer.ts';
import { secretServerKey } from './secret-server-key.ts';

/** The key file names under the local key directory. */
const FILE_NAMES: Readonly<Record<SignerRole, string>> = {
  rootCa: 'root-ca',
  signingCa: 'signing-ca',
  server: 'server',
};
/** The server key was the enrollment JWT key before it signed the TLS certificate too: an old data directory's file. */
const FORMER_SERVER_KEY_FILE = 'enrollment';

function unavailable(role: SignerRole): ServerKey {
  const refuse = async (): Promise<never> => {
    throw new Error(`this function has no ${role} key: the stack grants PKI keys only to the functions that sign`);
  };
  return { keyId: `none:${role}`, sign: refuse, publicKey: refuse, privateKeyPem: refuse };
}

/** A signer whose code loads with its first use (`load`, tried again if it failed): no part of a cold start. */
function signerLoadedOnUse(keyId: string, load: () => Promise<Signer>): Signer {
  const held = onceUntilRejected(load);
  return {
    keyId,
    sign: async (data) => (await held()).sign(data),
    publicKey: async () => (await held()).publicKey(),
  };
}

/** A key held by this process (`local-signer.ts`): functions in AWS hold only the server key this way. */
function localKey(name: string, make: (module: typeof import('./local-signer.ts')) => ServerKey): ServerKey {
  const held = onceUntilRejected(async () => make(await import('./local-signer.ts')));
  return {
    ...signerLoadedOnUse(`local:${name}`, held),
    privateKeyPem: async () => (await held()).privateKeyPem(),
  };
}

/** A CA key in KMS (`kms-signer.ts`): most functions never sign with one. */
function kmsKey(client: Parameters<typeof import('./kms-signer.ts').kmsSigner>[0], keyId: string): Signer {
  return signerLoadedOnUse(keyId, async () => (await import('./kms-signer.ts')).kmsSigner(client, keyId));
}

function each(make: (role: SignerRole) => ServerKey): Signers {
  return { rootCa: make('rootCa'), signingCa: make('signingCa'), server: make('server') };
}

/** The network's keys as the configuration places them; nothing is read or called until a key is used. */
export function createSigners(config: ControllerConfig): Signers {
  const keys = config.pkiKeys;
  switch (keys.kind) {
    case 'kms': {
      const client = madeOnFirstCall(
        async () => new (await import('@aws-sdk/client-kms')).KMSClient({ region: config.region }),
      );
      const kms = (keyId: string | undefined, role: SignerRole) => (keyId ? kmsKey(client, keyId) : unavailable(role));
      return {
        rootCa: kms(keys.rootCa, 'rootCa'),
        signingCa: kms(keys.signingCa, 'signingCa'),
        server: keys.serverKeySecretArn
          ? secretServerKey(config.region, keys.serverKeySecretArn)
          : unavailable('server'),
      };
    }
    case 'files':
      return each((role) =>
        localKey(FILE_NAMES[role], ({ fileSigner }) =>
          fileSigner(keys.directory, FILE_NAMES[role], role === 'server' ? FORMER_SERVER_KEY_FILE : undefined),
        ),
      );
    case 'memory':
      return each((role) => localKey(FILE_NAMES[role], ({ memorySigner }) => memorySigner(FILE_NAMES[role])));
    case 'none':
      return each(unavailable);
  }
}
