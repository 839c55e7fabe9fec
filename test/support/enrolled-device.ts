import type { HttpResponse } from './https-client.ts';
import { csrFor, leafOf } from './pki-fixtures.ts';
import type { TestController } from './test-controller.ts';

/** A URL-encoded PEM as the load balancer writes it in `X-Amzn-Mtls-Clientcert`: `+=/` left as they are. */
export function urlEncodedPem(pem: string): string {
  return encodeURIComponent(pem).replaceAll('%2B', '+').replaceAll('%3D', '=').replaceAll('%2F', '/');
}

/** A device identity enrolled by its one-time token over the client API: its id, key and certificate. */
export async function enrolledDevice(
  controller: () => TestController,
  call: (method: string, path: string, body?: unknown) => Promise<HttpResponse>,
  name: string,
  roleAttributes: readonly string[] = [],
) {
  const created = await call('POST', '/identities', {
    name,
    type: 'Device',
    isAdmin: false,
    roleAttributes,
    enrollment: { ott: true },
  });
  if (created.status !== 201) throw new Error(`identity ${name}: ${created.status} ${created.text}`);
  const id = created.body.data.id as string;
  const jwt = (await call('GET', `/identities/${id}`)).body.data.enrollment.ott.jwt as string;
  const token = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()).jti as string;
  const { csr, key } = await csrFor(id);
  const enrolled = await controller().call('POST', `/edge/client/v1/enroll?method=ott&token=${token}`, {
    rawBody: csr,
    headers: { 'content-type': 'application/x-pem-file' },
  });
  if (enrolled.status !== 200) throw new Error(`enrollment of ${name}: ${enrolled.status} ${enrolled.text}`);
  return { id, credentials: { key, cert: leafOf(enrolled.body.data.cert) } };
}
