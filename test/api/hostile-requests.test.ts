import { request as httpRequest } from 'node:http';
import { connect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '#shared/http/middleware/request-body.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { expectCouldNotValidate } from '../support/expect-could-not-validate.ts';
import { M } from '../support/management-fixtures.ts';
import { startTestController } from '../support/test-controller.ts';

const { controller, admin, call } = useAdminController();

interface RawResponse {
  readonly status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes; assertions narrow them.
  readonly body: any;
}

/** The body of an HTTP/1.1 response sent in chunks. */
function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const lineEnd = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, lineEnd), 16);
    if (!size) return out;
    out += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 2 + size + 2);
  }
}

/**
 * Sends a request line and headers exactly as written, which no HTTP client does for a malformed target or a foreign
 * `Host` (clients derive both from the URL, and TLS name checks follow `Host`).
 */
function rawRequest(requestLine: string, headers: readonly string[] = ['Host: localhost']): Promise<RawResponse> {
  const text = `${requestLine}\r\n${[...headers, 'Connection: close'].join('\r\n')}\r\n\r\n`;
  return new Promise((resolve, reject) => {
    // The server's certificate is the test's own; what is checked here is the answer, not the TLS name.
    const socket = connect({ host: '127.0.0.1', port: controller().server.port, rejectUnauthorized: false }, () =>
      socket.end(text),
    );
    socket.setEncoding('utf8');
    let received = '';
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('end', () => {
      const split = received.indexOf('\r\n\r\n');
      const head = received.slice(0, split);
      const rest = received.slice(split + 4);
      const body = /^transfer-encoding: chunked$/im.test(head) ? dechunk(rest) : rest;
      resolve({ status: Number(head.split(' ')[1]), body: body ? JSON.parse(body) : undefined });
    });
    socket.on('error', reject);
  });
}

const nestedArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('JSON bodies nested too deeply', () => {
  const targets: readonly [string, string, boolean][] = [
    ['POST', '/edge/client/v1/authenticate?method=password', false],
    ['POST', `${M}/identities`, true],
    ['PATCH', `${M}/identities/no-such-id`, true],
  ];

  it.each(
    targets.flatMap(([method, path, asAdmin]) => [
      [method, path, asAdmin, 'arrays', nestedArrays(20_000)],
      [method, path, asAdmin, 'objects', nestedObjects(20_000)],
      [method, path, asAdmin, 'arrays one level past the limit', nestedArrays(MAX_JSON_DEPTH + 1)],
    ]),
  )('%s %s answers 400 COULD_NOT_PARSE_BODY (admin: %s) for %s', async (method, path, asAdmin, _, rawBody) => {
    const response = await controller().call(method, path, {
      rawBody,
      headers: { 'content-type': 'application/json' },
      ...(asAdmin ? { token: admin() } : {}),
    });

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('COULD_NOT_PARSE_BODY');
    expect(response.body.error.cause.message).toContain(String(MAX_JSON_DEPTH));
  });

  it('reads a body nested exactly to the limit, and brackets inside strings do not count', async () => {
    const atLimit = await controller().call('POST', `${M}/identities`, {
      token: admin(),
      rawBody: `{"name":${nestedArrays(MAX_JSON_DEPTH - 1)}}`,
      headers: { 'content-type': 'application/json' },
    });
    const bracketsInName = await call('POST', '/identities', {
      name: `bracketed ${'[{'.repeat(MAX_JSON_DEPTH)}`,
      type: 'User',
      isAdmin: false,
    });

    expectCouldNotValidate(atLimit, 'name', { api: 'management', method: 'POST', path: '/identities' });
    expect(bracketsInName.status).toBe(201);
  });
});

describe('what an error echoes of the request', () => {
  const identity = (name: unknown) => ({ name, type: 'User', isAdmin: false });
  const posted = (name: unknown) => call('POST', '/identities', identity(name));
  const operation = { api: 'management', method: 'POST', path: '/identities' } as const;

  it('is at most 256 characters of a long text, saying how much more was sent', async () => {
    const name = 'n'.repeat(400_000);

    const response = await posted(name);

    expectCouldNotValidate(response, 'name', operation);
    expect(response.raw.length).toBeLessThan(2_000);
    expect(response.body.error.cause.value).toBe(`${'n'.repeat(256)}…(${400_000 - 256} more characters)`);
  });

  it('is the leading items of a long list that fit, and how many more there were', async () => {
    const response = await posted(Array.from({ length: 50_000 }, (_, index) => `item-${index}`));

    expectCouldNotValidate(response, 'name', operation);
    expect(response.raw.length).toBeLessThan(2_000);
    const value = response.body.error.cause.value as string[];
    expect(value.slice(0, 3)).toEqual(['item-0', 'item-1', 'item-2']);
    expect(value.at(-1)).toBe(`…(${50_001 - value.length} more items)`);
    expect(JSON.stringify(value.slice(0, -1)).length).toBeLessThanOrEqual(256);
  });

  it('is the start of a large object’s JSON, and a short one whole', async () => {
    const large = Object.fromEntries(Array.from({ length: 20_000 }, (_, index) => [`key-${index}`, index]));

    const refusedLarge = await posted(large);
    const refusedSmall = await posted({ short: true });

    expectCouldNotValidate(refusedLarge, 'name', operation);
    expect(refusedLarge.raw.length).toBeLessThan(2_000);
    expect(refusedLarge.body.error.cause.value).toMatch(/^\{"key-0":0,"key-1":1,.*…\(\d+ more characters\)$/);
    expect(refusedSmall.body.error.cause.value).toEqual({ short: true });
  });

  it('is cut between characters, never inside a surrogate pair', async () => {
    const response = await posted(`x${'😀'.repeat(300)}`);

    expectCouldNotValidate(response, 'name', operation);
    // 256 units hold the x and 127 pairs; the 128th pair would be split, so it is left out whole.
    expect(response.body.error.cause.value).toBe(`x${'😀'.repeat(127)}…(346 more characters)`);
  });
});

describe('request targets the URL parser refuses', () => {
  it('answers 400 in the error envelope for an unclosed IPv6 bracket in an absolute-form target', async () => {
    const response = await rawRequest('GET http://[::1/edge/client/v1/version HTTP/1.1');

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('COULD_NOT_VALIDATE');
    // API Gateway's kind of request id (a UUID), which the local server gives every request.
    expect(response.body.error.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(response.body.meta.apiVersion).toBe('0.0.1');
    expect(controller().logLines.join('\n')).not.toContain('local server fault');
  });

  it('answers a browser preflight of an unparsable target with the same 400, and of an unknown path with 404', async () => {
    const preflight = ['Host: localhost', 'Origin: https://console.example.com', 'Access-Control-Request-Method: GET'];
    const unparsable = await rawRequest('OPTIONS http://[::1/edge/client/v1/version HTTP/1.1', preflight);
    const unknown = await rawRequest('OPTIONS /edge/client/v1/no-such-thing HTTP/1.1', preflight);

    expect(unparsable.status).toBe(400);
    expect(unparsable.body.error.code).toBe('COULD_NOT_VALIDATE');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
  });

  it('still serves a well-formed absolute-form target', async () => {
    const response = await rawRequest('GET https://localhost/edge/client/v1/version HTTP/1.1');

    expect(response.status).toBe(200);
    expect(response.body.data.apiVersions['edge-client'].v1.path).toBe('/edge/client/v1');
  });
});

describe('HEAD', () => {
  it('is not advertised to browsers, and answers 405 like any method the API does not serve', async () => {
    const preflight = await controller().call('OPTIONS', '/version', {
      headers: { origin: 'https://console.example.com', 'access-control-request-method': 'GET' },
    });
    const head = await rawRequest('HEAD /version HTTP/1.1');

    const advertised = String(preflight.headers['access-control-allow-methods']).split(', ');
    expect(advertised).toEqual(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
    expect(head.status).toBe(405);
  });
});

describe('the base URLs /version advertises', () => {
  const clientBaseUrls = (response: RawResponse): string[] =>
    response.body.data.apiVersions['edge-client'].v1.apiBaseUrls;

  it.each([
    'evil.example.com',
    'evil.example.com:<port>',
    'localhost:1"><script>alert(1)</script>',
    'localhost:1',
    'localhost',
  ])('ignore a Host that does not name this server (%s) and use its own origin', async (host) => {
    const sent = host.replace('<port>', String(controller().server.port));
    const response = await rawRequest('GET /version HTTP/1.1', [`Host: ${sent}`]);

    expect(response.status).toBe(200);
    expect(clientBaseUrls(response)).toEqual([`${controller().origin}/edge/client/v1`]);
  });

  it('answer with its own origin when the request has no Host', async () => {
    const response = await rawRequest('GET /version HTTP/1.0', []);

    expect(clientBaseUrls(response)).toEqual([`${controller().origin}/edge/client/v1`]);
  });

  it.each(['127.0.0.1', 'LOCALHOST'])('follow a Host that names this server on its port (%s)', async (name) => {
    const authority = `${name}:${controller().server.port}`;
    const response = await rawRequest('GET /version HTTP/1.1', [`Host: ${authority}`]);

    expect(clientBaseUrls(response)).toEqual([`https://${authority.toLowerCase()}/edge/client/v1`]);
  });

  it('use the configured public URL whatever the Host', async () => {
    const configured = await startTestController({ publicBaseUrl: 'https://ziti.example.net/' });
    try {
      const response = await configured.call('GET', '/version', { headers: { host: 'localhost:1' } });

      expect(response.body.data.apiVersions['edge-management'].v1.apiBaseUrls).toEqual([
        'https://ziti.example.net/edge/management/v1',
      ]);
    } finally {
      await configured.close();
    }
  });
});

describe('plain HTTP to the HTTPS port', () => {
  it('answers a readable 400 that names the https:// URL, and the port still serves HTTPS', async () => {
    const { port } = controller().server;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest({ host: '127.0.0.1', port, path: '/version' }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.on('error', reject);
      request.end();
    });

    expect(answer.status).toBe(400);
    const { error } = JSON.parse(answer.body);
    expect(error.code).toBe('COULD_NOT_VALIDATE');
    expect(error.message).toContain(`use https://localhost:${port}/`);
    expect((await controller().call('GET', '/version')).status).toBe(200);
  });
});
