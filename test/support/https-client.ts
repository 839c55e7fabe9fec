import { request as httpsRequest } from 'node:https';
import { checkServerIdentity } from 'node:tls';

export interface HttpResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
  /** The body's bytes (images). */
  readonly raw: Buffer;
  /** The parsed JSON body (undefined when the body is not JSON). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes; assertions narrow them.
  readonly body: any;
}

export interface RequestOptions {
  readonly body?: unknown;
  /** Sent as is, no JSON encoding (malformed JSON, PEM bodies). */
  readonly rawBody?: string | Buffer;
  readonly token?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly cert?: { readonly key: string; readonly cert: string };
  /** The local address to send from (any 127.x.y.z reaches the loopback server), so tests can be other sources. */
  readonly sourceAddress?: string;
}

/** One HTTPS request to the local controller (its self-signed certificate is trusted explicitly). */
export function httpsCall(
  origin: string,
  ca: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<HttpResponse> {
  const url = new URL(path, origin);
  const payload =
    options.rawBody !== undefined
      ? options.rawBody
      : options.body !== undefined
        ? JSON.stringify(options.body)
        : undefined;
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
    // Node sends a DELETE body with neither a length nor chunked encoding unless told its length (a test that asks
    // for chunked encoding gets no length).
    ...(payload !== undefined && options.headers?.['transfer-encoding'] === undefined
      ? { 'content-length': String(Buffer.byteLength(payload)) }
      : {}),
    ...(options.token ? { 'zt-session': options.token } : {}),
    ...options.headers,
  };
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method,
        headers,
        ca,
        // The server is who the URL names, whatever Host header a test sends.
        checkServerIdentity: (_host, cert) => checkServerIdentity(url.hostname, cert),
        ...(options.cert ? { key: options.cert.key, cert: options.cert.cert } : {}),
        ...(options.sourceAddress ? { localAddress: options.sourceAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const text = raw.toString('utf8');
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, raw, body });
        });
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}
