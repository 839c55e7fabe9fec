/**
 * Where the certificates API Gateway's mutual TLS trusts are published: the network CA plus every verified
 * third-party CA, one PEM bundle. In AWS an S3 object the mTLS custom domain reads (`s3-truststore.ts`); locally
 * nothing, as the local HTTPS server asks for an optional certificate and the handlers check the chain themselves.
 */
export interface Truststore {
  /** Replaces the published bundle; called when a CA is verified or deleted, and by the bootstrap. */
  publish(bundlePem: string): Promise<void>;
}

/** No mTLS domain to feed (local server, tests, functions the stack gives no truststore). */
export const NO_TRUSTSTORE: Truststore = { publish: async () => {} };
