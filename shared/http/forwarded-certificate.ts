import type { ControllerConfig } from '../config.ts';
import { ApiError } from '../errors/api-error.ts';

// One block of the PEM chain the load balancer forwards, matched where the last one ended (sticky): the body's class
// has no '-', so a block that does not end where it should fails at once, and the whole chain is read in one pass.
const PEM_BLOCK = /-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----\r?\n?/y;
/** More certificates than any real chain has: a header past it is refused before anything parses it. */
export const MAX_FORWARDED_CERTIFICATES = 16;

function malformed(reason: string): ApiError {
  return new ApiError('COULD_NOT_VALIDATE', {
    message: 'The forwarded client certificate header is malformed.',
    cause: { message: reason },
  });
}

/**
 * The client certificate (the leaf, PEM) a load balancer forwarded, or undefined when the request came without one.
 * This is the only place the header is read, and it is a credential: whoever can set it logs in as its certificate's
 * identity. So it is read only from an ALB event (`albValues` are that event's values of the header) and only when
 * the deployment says its front door is the load balancer; anywhere else a header of that name is an ordinary header
 * the client sent, and the request has no certificate.
 *
 * Why a header the load balancer forwards proves possession of the key — AWS, "Mutual authentication with TLS in
 * Application Load Balancer" (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/mutual-authentication.html):
 * "With mutual TLS, a load balancer negotiates mutual authentication between the client and the server while
 * negotiating TLS"; in passthrough mode "the load balancer sends the entire client certificate chain to the target,
 * without verifying it. Targets should verify the client certificate chain"; the `X-Amzn-Mtls-Clientcert` header
 * "contains the URL-encoded PEM format of the entire client certificate chain presented in the connection, with +=/ as
 * safe characters", in the order "starts with the leaf certificates and finishes with the root certificate"; and
 * "Session resumption is not supported while using mutual TLS passthrough or verify modes". The chain is the one
 * presented in the handshake the load balancer completed, and TLS makes the server check the client's signature over
 * that handshake with the leaf's key (RFC 8446 §4.4.3: "The receiver of a CertificateVerify message MUST verify the
 * signature field"): the client holds the key. The chain itself is not verified: the certificate login checks the
 * leaf against its authenticator and the CAs, as it always has.
 *
 * What AWS does not say: that the load balancer removes a header of that name which the client sent itself, above all
 * when the client presented no certificate (the certificate is optional on our listener). Hence the defence: the
 * listener renames the header (`routing.http.request.x_amzn_mtls_clientcert.header_name`, "Enables you to modify the
 * header name of the X-Amzn-Mtls-Clientcert HTTP request header", AWS's ListenerAttribute API reference) to a name of
 * the deployment's own that no client can guess (`ALB_CLIENT_CERT_HEADER`, which `shared/config.ts` requires in Lambda
 * with this front door), and more than one value of it (a client's and the load balancer's, with multi-value headers
 * on the target group) is refused. Only `X-Amzn-Mtls-Clientcert` is read, never the verify mode's `-Leaf` and others.
 *
 * A value that is not a URL-encoded PEM chain is a 400 in the envelope, never a 500 and never "no certificate".
 */
export function forwardedCertificateOf(
  config: Pick<ControllerConfig, 'frontDoor'>,
  albValues: readonly string[] | undefined,
): string | undefined {
  if (config.frontDoor !== 'alb' || !albValues || albValues.length === 0) return undefined;
  if (albValues.length > 1) throw malformed('the certificate header is present more than once');
  let pem: string;
  try {
    pem = decodeURIComponent(albValues[0]!);
  } catch {
    throw malformed('the certificate header is not URL-encoded');
  }
  const blocks = pemBlocksOf(pem);
  if (!blocks) throw malformed('the certificate header is not a PEM certificate chain');
  if (blocks.length > MAX_FORWARDED_CERTIFICATES) {
    throw malformed(`the certificate chain has more than ${MAX_FORWARDED_CERTIFICATES} certificates`);
  }
  return blocks[0];
}

/** The certificate blocks of a PEM text made of nothing else, or undefined. */
function pemBlocksOf(pem: string): string[] | undefined {
  const blocks: string[] = [];
  PEM_BLOCK.lastIndex = 0;
  while (PEM_BLOCK.lastIndex < pem.length) {
    const block = PEM_BLOCK.exec(pem);
    if (!block) return undefined;
    blocks.push(block[0]);
  }
  return blocks.length > 0 ? blocks : undefined;
}
