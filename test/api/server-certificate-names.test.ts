import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ensureServerCertificate } from '#shared/pki/server-certificate.ts';
import { useAdminController } from '../support/admin-controller.ts';

const { controller } = useAdminController();

describe("the controller's server certificate", () => {
  it('names a host longer than a common name may be (an NLB DNS name) in its alternative names, the common name kept within 64', async () => {
    // An internet-facing NLB's name: up to 32 characters of name, a 16-hex-digit suffix and the region's domain.
    const nlbName = 'ZitiController-RouterEndpoint12-0123456789abcdef.elb.ap-southeast-1.amazonaws.com';
    expect(nlbName.length).toBeGreaterThan(64);

    const { certPem } = await ensureServerCertificate(controller().deps, [nlbName, 'ctrl.lab.test']);

    const certificate = new X509Certificate(certPem);
    expect(certificate.checkHost(nlbName)).toBe(nlbName);
    expect(certificate.checkHost('ctrl.lab.test')).toBe('ctrl.lab.test');
    const commonName = /CN=([^\n]*)/.exec(certificate.subject)?.[1] ?? '';
    expect(commonName.length).toBeGreaterThan(0);
    expect(commonName.length).toBeLessThanOrEqual(64);
  });
});
