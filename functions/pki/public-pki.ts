import * as z from 'zod';
import { invalidField } from '#shared/errors/api-error.ts';
import { ok } from '#shared/http/envelope.ts';
import { JSON_HEADERS } from '#shared/http/error-response.ts';
import { documented, type Operation } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { JWT_ALGORITHM, publicJwk, signNetworkJwt } from '#shared/pki/enrollment-jwt.ts';
import { caBundleDer, networkCa } from '#shared/pki/network-ca.ts';
import type { Deps } from '#shared/ports/deps.ts';

/**
 * `GET /.well-known/est/cacerts`: the network's CA certificates as base64 PKCS#7 certs-only (RFC 7030 §4.1.3), in
 * lines of 64 characters as RFC 7030 servers and the reference send it: SDKs decode it with OpenSSL's BIO base64 in
 * newline mode, which reads one unbroken line of more than a few hundred characters as nothing.
 */
export const listWellKnownCas: Operation = async (_request, deps) => {
  const der = await caBundleDer(await networkCa(deps));
  return {
    statusCode: 200,
    body: `${Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n').trimEnd()}\n`,
    headers: { ...JSON_HEADERS, 'content-type': 'application/pkcs7-mime', 'content-transfer-encoding': 'base64' },
  };
};

/** `GET /enroll/jwks`: the server key's public half (the key of every enrollment JWT), unenveloped. */
export const getEnrollmentJwks: Operation = async (_request, deps) => ({
  statusCode: 200,
  body: { keys: [await publicJwk(deps.signers.server)] },
});

const challengeSchema = z.object({ keyId: z.string(), nonce: z.uuid() });

/**
 * `POST /enroll/challenge`: proves the controller holds the enrollment key. The signature is the JWS form (raw r‖s,
 * base64url) over the nonce's UTF-8 bytes, verifiable with the JWKS key named by `kid`; `caPool` is the CA bundle
 * (PEM) an enrolling client should trust. Unenveloped, as the reference answers it.
 */
export const enrollmentChallenge: Operation = documented(
  async (request, deps) => {
    const { keyId, nonce } = parseWith(challengeSchema, request.body);
    const signer = deps.signers.server;
    const [{ kid }, ca] = await Promise.all([publicJwk(signer), networkCa(deps)]);
    if (keyId !== kid) throw invalidField('keyId', `no enrollment key has the id ${keyId}`, keyId);
    const signature = await signer.sign(new TextEncoder().encode(nonce));
    return {
      statusCode: 200,
      body: {
        algorithm: JWT_ALGORITHM,
        caPool: `${ca.rootCertPem}\n${ca.signingCertPem}`,
        kid,
        signature: Buffer.from(signature).toString('base64url'),
      },
    };
  },
  { body: challengeSchema },
);

/** One network JWT per origin per process: it never expires, and signing one per request would cost a `Sign` each. */
const networkJwts = new WeakMap<object, Map<string, Promise<string>>>();

function networkJwt(deps: Deps, baseUrl: string): Promise<string> {
  let byOrigin = networkJwts.get(deps.signers.server);
  if (!byOrigin) {
    byOrigin = new Map();
    networkJwts.set(deps.signers.server, byOrigin);
  }
  let jwt = byOrigin.get(baseUrl);
  if (!jwt) {
    jwt = signNetworkJwt(deps.signers.server, baseUrl);
    jwt.catch(() => byOrigin.delete(baseUrl));
    byOrigin.set(baseUrl, jwt);
  }
  return jwt;
}

/** `GET /network-jwts`: the JWT a client that knows only the controller's URL bootstraps its trust with. */
export const listNetworkJWTs: Operation = async (request, deps) =>
  ok([{ name: 'default', token: await networkJwt(deps, request.baseUrl) }]);
