import { webcrypto } from 'node:crypto';
import { firstCertificateOf } from '#shared/pki/certificates.ts';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import type { Deps } from '#shared/ports/deps.ts';
import type { Signer } from '#shared/ports/signer.ts';
import type { SessionBenchOptions } from './api-session-bench.ts';
import { createBenchClient } from './bench-client.ts';
import { startBenchController } from './bench-controller.ts';
import { BASE, expectStatus, login } from './identity-scenarios.ts';
import { type MeasureOptions, measureOperation, type OperationFigures } from './measure-operation.ts';

/** One PKI operation measured, with the signatures (KMS `Sign` calls in AWS) each run made. */
export interface PkiRow {
  readonly label: string;
  readonly figures: OperationFigures;
  readonly signsPerOp: number;
}

const CLIENT = '/edge/client/v1';
/** Each enrollment uses up a token made beforehand, so the runs are counted out: no time-based warm-up. */
const ENROLL_MEASURE: MeasureOptions = {
  warmUp: 3,
  warmUpMs: 0,
  maxIterations: 40,
  minIterations: 10,
  budgetMs: 8_000,
};

/** Counts every signature the controller's keys make (what would be a KMS `Sign` each). */
function countAllSigns(signers: Deps['signers']): () => number {
  let signs = 0;
  for (const signer of Object.values(signers) as Signer[]) {
    const sign = signer.sign.bind(signer);
    (signer as { sign: Signer['sign'] }).sign = (data) => {
      signs++;
      return sign(data);
    };
  }
  return () => signs;
}

/** A fresh P-256 key and a certificate signing request for it. */
export async function csr(cn: string) {
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const request = await x509.Pkcs10CertificateRequestGenerator.create(
    { name: `CN=${cn}`, keys, signingAlgorithm: algorithm },
    webcrypto as never,
  );
  const key = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  return { csr: request.toString('pem'), key };
}

/**
 * Enrollment and certificate login, on a table of their own: an ott enrollment (token lookup, one certificate from
 * the signing CA, the authenticator written as the enrollment goes) and a cert login over mutual TLS with the
 * certificate it issued. The signatures each run made are what KMS would be asked for in AWS: one per enrollment,
 * none per login.
 */
export async function pkiBench(options: SessionBenchOptions): Promise<PkiRow[]> {
  const bench = await startBenchController('bench-pki', options);
  const { deps, meter, client, origin } = bench;
  const signs = countAllSigns(deps.signers);
  try {
    const admin = await login(client, options.adminUsername, options.adminPassword);
    const runs = ENROLL_MEASURE.warmUp + ENROLL_MEASURE.maxIterations;
    options.progress(`making ${runs} ott enrollments to use up`);
    const tokens: string[] = [];
    for (let i = 0; i < runs; i++) {
      const created = await client.call('POST', `${BASE}/identities`, {
        token: admin,
        body: { name: `bench-ott-${i}`, type: 'Device', isAdmin: false, enrollment: { ott: true } },
      });
      const id = (expectStatus(created, 201, 'create identity').body as { data: { id: string } }).data.id;
      const detail = await client.call('GET', `${BASE}/identities/${id}`, { token: admin });
      tokens.push((detail.body as { data: { enrollment: { ott: { token: string } } } }).data.enrollment.ott.token);
    }
    const request = await csr('bench-device');
    let issued = '';
    const rows: PkiRow[] = [];
    const measured = async (label: string, run: () => Promise<void>, measure: MeasureOptions) => {
      const before = signs();
      const figures = await measureOperation(run, meter, measure);
      const runsMade = figures.iterations + measure.warmUp;
      rows.push({ label, figures, signsPerOp: (signs() - before) / runsMade });
    };
    await measured(
      'ott enrollment (`POST /enroll/ott`, JSON with a PEM CSR)',
      async () => {
        const response = await client.call('POST', `${CLIENT}/enroll/ott`, {
          body: { token: tokens.pop(), clientCsr: request.csr },
        });
        issued = (expectStatus(response, 200, 'enroll').body as { data: { cert: string } }).data.cert;
      },
      ENROLL_MEASURE,
    );
    // The last certificate issued logs in; its own keep-alive connection presents it once, as an SDK does.
    const leaf = firstCertificateOf(issued)!.toString();
    const certClient = createBenchClient(origin, options.tls.cert, { key: request.key, cert: leaf });
    try {
      await measured(
        'cert login (`POST /authenticate?method=cert`, mTLS)',
        async () => {
          expectStatus(await certClient.call('POST', `${CLIENT}/authenticate?method=cert`, { body: {} }), 200, 'login');
        },
        { ...options.measure, warmUpMs: 0 },
      );
    } finally {
      certClient.close();
    }
    return rows;
  } finally {
    await bench.close();
  }
}
