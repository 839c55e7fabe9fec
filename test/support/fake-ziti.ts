import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { dialCtrl } from './ctrl-router.ts';
import { csrFor, leafOf } from './pki-fixtures.ts';
import type { TestController } from './test-controller.ts';

/**
 * A stand-in for OpenZiti's `ziti` binary, for the tests of `npm start -- --router` on a machine without it: `ziti
 * router enroll <config> --jwt <file>` enrolls as the real one does (the JWT's `erott` token, a client and a server
 * CSR, the certificates written where the configuration names them), and `ziti router run <config>` connects the
 * control channel with them and answers heartbeats until it is stopped. Every call is appended to `FAKE_ZITI_CALLS`,
 * and a running router's pid written beside it (`<file>.pid`).
 * Run as `node test/support/fake-ziti.ts <args>` through a `ziti` wrapper the test writes.
 */

const args = process.argv.slice(2);
if (process.env.FAKE_ZITI_CALLS) writeFileSync(process.env.FAKE_ZITI_CALLS, `${args.join(' ')}\n`, { flag: 'a' });

/** The value of `key:` in the router configuration (the first one: `endpoint:` is the control channel's). */
function configValue(config: string, key: string): string {
  const line = config.split('\n').find((each) => each.trim().startsWith(`${key}:`));
  return (
    line
      ?.trim()
      .slice(key.length + 1)
      .trim() ?? ''
  );
}

function post(url: URL, body: unknown): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const sent = request(
      url,
      { method: 'POST', rejectUnauthorized: false, headers: { 'content-type': 'application/json' } },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        response.on('end', () =>
          response.statusCode === 200
            ? resolve(JSON.parse(text).data)
            : reject(new Error(`${response.statusCode} ${text}`)),
        );
      },
    );
    sent.on('error', reject);
    sent.end(JSON.stringify(body));
  });
}

async function enroll(configFile: string, jwtFile: string): Promise<void> {
  const jwt = readFileSync(jwtFile, 'utf8').trim();
  const claims = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());
  const client = await csrFor('router');
  const server = await csrFor('router', [{ type: 'ip', value: '127.0.0.1' }]);
  const enrolled = await post(new URL('/edge/client/v1/enroll/erott', claims.iss), {
    token: claims.jti,
    clientCsr: client.csr,
    serverCsr: server.csr,
  });
  const dir = join(configFile, '..');
  writeFileSync(join(dir, 'client.cert.pem'), String(enrolled.cert));
  writeFileSync(join(dir, 'server.cert.pem'), String(enrolled.serverCert));
  writeFileSync(join(dir, 'router.key.pem'), client.key);
  writeFileSync(join(dir, 'ca-chain.cert.pem'), String(enrolled.ca));
}

async function run(configFile: string): Promise<void> {
  const dir = join(configFile, '..');
  const config = readFileSync(configFile, 'utf8');
  const [, , port] = configValue(config, 'endpoint').split(':');
  const cert = leafOf(readFileSync(join(dir, 'client.cert.pem'), 'utf8'));
  const routerId = new X509Certificate(cert).subject.match(/CN=([^\n]+)/)?.[1] ?? '';
  const controller = {
    server: { port: Number(port) },
    rootCertPem: readFileSync(join(dir, 'ca-chain.cert.pem'), 'utf8'),
  };
  const end = await dialCtrl(
    controller as unknown as TestController,
    { cert, key: readFileSync(join(dir, 'router.key.pem'), 'utf8') },
    {
      answerHeartbeats: true,
    },
  );
  await end.hello(routerId);
  if (process.env.FAKE_ZITI_CALLS) writeFileSync(`${process.env.FAKE_ZITI_CALLS}.pid`, String(process.pid));
  process.once('SIGTERM', () => {
    end.socket.destroy();
    process.exit(0);
  });
  await end.closed;
}

const [command, verb, config] = args;
if (command === 'router' && verb === 'enroll' && config) await enroll(config, args[args.indexOf('--jwt') + 1] ?? '');
else if (command === 'router' && verb === 'run' && config) await run(config);
else {
  process.stderr.write(`fake ziti: ${args.join(' ')} is not something it does\n`);
  process.exit(2);
}
