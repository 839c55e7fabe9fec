/** A TLS server's certificate as a TLS terminator takes it: leaf, private key and the CA chain above the leaf (PEM). */
export interface CertificateMaterial {
  readonly certificatePem: string;
  readonly privateKeyPem: string;
  readonly chainPem: string;
}

/**
 * Where the controller's server certificate is handed to the TLS terminator in front of the API: ACM, for API
 * Gateway's custom domains, in AWS (`acm-certificate-importer.ts`). The local server presents the certificate itself.
 */
export interface CertificateImporter {
  /**
   * Imports `material` as a new certificate, or in place of the one `replacing` names (which keeps its id, so what
   * serves it picks the new one up); answers the certificate's id.
   */
  import(material: CertificateMaterial, replacing?: string): Promise<string>;
}

/**
 * The tag key marking the certificates a stack's bootstrap imported; its value is the stack's name. The bootstrap's
 * IAM grants are scoped by it: new imports must carry it, re-imports only go into certificates that do.
 */
export const SERVER_CERTIFICATE_TAG_KEY = 'ziti-controller';
