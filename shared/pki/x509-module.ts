import type * as X509 from '@peculiar/x509';

/**
 * @peculiar/x509 (with the reflect-metadata it needs first), loaded on first use. With its ASN.1 stack it is about
 * 230 KB of a bundle: the operations that make or parse certificates load it, and a function whose first request
 * makes none (most requests only read the stored CA, for the instance id) never does.
 */
export async function x509Module(): Promise<typeof X509> {
  await import('reflect-metadata');
  return import('@peculiar/x509');
}
