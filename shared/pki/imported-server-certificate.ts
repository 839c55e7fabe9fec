import type { Deps } from '../ports/deps.ts';
import { readSystemItem, writeSystemItem } from '../store/system-items.ts';
import type { CertificateImporter } from './certificate-importer.ts';
import { ensureServerCertificate } from './server-certificate.ts';

/** What was last imported and where: beside the server certificate, in its own item (which a renewal replaces). */

/**
 * The server certificate for `names` (`ensureServerCertificate`: issued, renewed or kept), imported where the API's
 * TLS is terminated when it differs from what was imported last: the first time as a new certificate, later into the
 * same one, so the custom domains that serve it keep their certificate id. An unchanged certificate is not imported
 * again. The private key goes to the importer only; it is never logged or returned.
 */
export async function ensureImportedServerCertificate(
  deps: Deps,
  names: readonly string[],
  importer: CertificateImporter,
): Promise<{ readonly certificateArn: string; readonly imported: boolean }> {
  const certificate = await ensureServerCertificate(deps, names);
  const Item = await readSystemItem(deps.store, 'server-certificate-import');
  const previousArn = typeof Item?.certificateArn === 'string' ? Item.certificateArn : undefined;
  if (previousArn && Item?.certPem === certificate.certPem && Item?.caChainPem === certificate.caChainPem) {
    return { certificateArn: previousArn, imported: false };
  }
  const certificateArn = await importer.import(
    {
      certificatePem: certificate.certPem,
      privateKeyPem: await deps.signers.server.privateKeyPem(),
      chainPem: certificate.caChainPem,
    },
    previousArn,
  );
  await writeSystemItem(deps.store, 'server-certificate-import', {
    certificateArn,
    certPem: certificate.certPem,
    caChainPem: certificate.caChainPem,
    importedAt: deps.now().toISOString(),
  });
  deps.logger.info('server certificate imported', { certificateArn, reimported: previousArn !== undefined, names });
  return { certificateArn, imported: true };
}
