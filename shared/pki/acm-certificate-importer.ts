import { type ACMClient, ImportCertificateCommand } from '@aws-sdk/client-acm';
import { type CertificateImporter, SERVER_CERTIFICATE_TAG_KEY } from './certificate-importer.ts';

const encoder = new TextEncoder();

/**
 * Imports into ACM. A new certificate is tagged `ziti-controller=<tagValue>`; a re-import names the certificate's ARN
 * and carries no tags (ACM refuses tags on re-import, and the certificate keeps the ones it has).
 */
export function acmCertificateImporter(acm: ACMClient, tagValue: string): CertificateImporter {
  return {
    async import(material, replacing) {
      const answer = await acm.send(
        new ImportCertificateCommand({
          Certificate: encoder.encode(material.certificatePem),
          PrivateKey: encoder.encode(material.privateKeyPem),
          CertificateChain: encoder.encode(material.chainPem),
          ...(replacing
            ? { CertificateArn: replacing }
            : { Tags: [{ Key: SERVER_CERTIFICATE_TAG_KEY, Value: tagValue }] }),
        }),
      );
      if (!answer.CertificateArn) throw new Error('ACM answered the certificate import without an ARN');
      return answer.CertificateArn;
    },
  };
}
