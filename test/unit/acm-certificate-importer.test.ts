import { describe, expect, it } from 'vitest';
import { acmCertificateImporter } from '#shared/pki/acm-certificate-importer.ts';
import { SERVER_CERTIFICATE_TAG_KEY } from '#shared/pki/certificate-importer.ts';
import { useLoopbackAcm } from '../support/loopback-acm.ts';

const ARN = 'arn:aws:acm:eu-west-1:123456789012:certificate/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0';
const MATERIAL = {
  certificatePem: '-----BEGIN CERTIFICATE-----\nLEAF\n-----END CERTIFICATE-----\n',
  privateKeyPem: '-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n',
  chainPem: '-----BEGIN CERTIFICATE-----\nSIGNING\n-----END CERTIFICATE-----\n',
};

const acm = useLoopbackAcm();

describe('the ACM certificate importer', () => {
  it('imports a new certificate with its key and chain, tagged with the stack, and answers its ARN', async () => {
    acm().answerWith({ CertificateArn: ARN });

    const arn = await acmCertificateImporter(acm().client(), 'ZitiController').import(MATERIAL);

    expect(arn).toBe(ARN);
    expect(acm().received).toEqual([
      {
        target: 'CertificateManager.ImportCertificate',
        certificatePem: MATERIAL.certificatePem,
        privateKeyPem: MATERIAL.privateKeyPem,
        chainPem: MATERIAL.chainPem,
        certificateArn: undefined,
        tags: [{ Key: SERVER_CERTIFICATE_TAG_KEY, Value: 'ZitiController' }],
      },
    ]);
  });

  it('re-imports into the certificate it names, without tags (ACM refuses them on re-import)', async () => {
    const arn = await acmCertificateImporter(acm().client(), 'ZitiController').import(MATERIAL, ARN);

    expect(arn).toBe(ARN);
    expect(acm().received).toEqual([
      expect.objectContaining({ certificatePem: MATERIAL.certificatePem, certificateArn: ARN, tags: undefined }),
    ]);
    expect(acm().received[0]?.privateKeyPem).toBe(MATERIAL.privateKeyPem);
  });

  it('fails when ACM answers without an ARN, rather than hand the custom domains nothing', async () => {
    acm().answerWith({});
    await expect(acmCertificateImporter(acm().client(), 'ZitiController').import(MATERIAL)).rejects.toThrow(
      /without an ARN/,
    );
  });
});
