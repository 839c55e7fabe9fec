import { Agent, request } from 'node:https';

export interface BenchResponse {
  readonly status: number;
  /** The parsed JSON body; undefined when the body is empty or not JSON. */
  readonly body: unknown;
  readonly text: string;
  /** The answer's headers, as Node parsed them (names in lower case): a `Location` to follow, say. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface BenchClient {
  call(
    method: string,
    path: string,
    options?: {
      readonly body?: unknown;
      /** A body sent as it is (a form, say), its `content-type` given in `headers`; `body` is ignored with it. */
      readonly rawBody?: string;
      readonly token?: string;
      readonly headers?: Readonly<Record<string, string>>;
    },
  ): Promise<BenchResponse>;
  close(): void;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * HTTPS to the local controller over one kept-alive connection, so a measured request is the handler's work plus a
 * loopback round trip, not a TLS handshake (API Gateway terminates TLS in AWS).
 */
export function createBenchClient(
  origin: string,
  ca: string,
  clientCert?: { readonly key: string; readonly cert: string },
): BenchClient {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca, ...clientCert });
  return {
    call: (method, path, options = {}) => {
      const json = options.rawBody === undefined && options.body !== undefined;
      const payload = options.rawBody ?? (json ? JSON.stringify(options.body) : undefined);
      const headers: Record<string, string> = {
        accept: 'application/json',
        ...(json ? { 'content-type': 'application/json' } : {}),
        ...(options.token ? { 'zt-session': options.token } : {}),
        ...options.headers,
      };
      return new Promise((resolve, reject) => {
        const req = request(new URL(path, origin), { method, headers, agent }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body: parseJson(text), text, headers: res.headers }),
          );
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(payload);
      });
    },
    close: () => agent.destroy(),
  };
}
