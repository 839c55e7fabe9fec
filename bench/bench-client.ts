import { Agent, request } from 'node:https';

export interface BenchResponse {
  readonly status: number;
  /** The parsed JSON body; undefined when the body is empty or not JSON. */
  readonly body: unknown;
  readonly text: string;
}

export interface BenchClient {
  call(
    method: string,
    path: string,
    options?: {
      readonly body?: unknown;
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
      const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
      const headers: Record<string, string> = {
        accept: 'application/json',
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
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
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: parseJson(text), text }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(payload);
      });
    },
    close: () => agent.destroy(),
  };
}
