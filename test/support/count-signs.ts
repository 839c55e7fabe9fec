import type { Signer } from '#shared/ports/signer.ts';

/** Counts a running controller's signatures with one key (a KMS `Sign` each in AWS); read `count()` around an act. */
export function countSigns(signer: Signer): { count(): number } {
  let signs = 0;
  const counted = signer as { sign: Signer['sign'] };
  const sign = counted.sign.bind(signer);
  counted.sign = (data) => {
    signs++;
    return sign(data);
  };
  return { count: () => signs };
}
