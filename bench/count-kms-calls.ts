import type { Deps } from '#shared/ports/deps.ts';
import type { SecretBox } from '#shared/ports/secret-box.ts';
import type { Signer } from '#shared/ports/signer.ts';

export interface KmsCounter {
  /** KMS requests so far: CA signatures (`Sign`), secrets sealed (`GenerateDataKey`) and opened (`Decrypt`). */
  count(): number;
  uncounted<T>(work: () => Promise<T>): Promise<T>;
}

/**
 * Counts the calls that are KMS requests in AWS: a signature by the root or signing CA key (KMS keys) and each seal
 * or open of the secret box (a data key generated or decrypted by KMS). The server key is held (a Secrets Manager
 * secret read once per cold start), so its signatures are not KMS requests. The wrappers replace the methods on the
 * objects `deps` holds, so the handlers that share them are counted.
 */
export function countKmsCalls(deps: Pick<Deps, 'signers' | 'secretBox'>): KmsCounter {
  let calls = 0;
  let paused = 0;
  const counted = <A extends unknown[], R>(call: (...args: A) => Promise<R>) => {
    return (...args: A) => {
      if (paused === 0) calls++;
      return call(...args);
    };
  };
  for (const signer of [deps.signers.rootCa, deps.signers.signingCa] as Signer[]) {
    (signer as { sign: Signer['sign'] }).sign = counted(signer.sign.bind(signer));
  }
  const box = deps.secretBox as { seal: SecretBox['seal']; open: SecretBox['open'] };
  box.seal = counted(box.seal.bind(box));
  box.open = counted(box.open.bind(box));
  return {
    count: () => calls,
    uncounted: async (work) => {
      paused++;
      try {
        return await work();
      } finally {
        paused--;
      }
    },
  };
}
