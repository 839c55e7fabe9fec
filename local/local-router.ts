import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { delimiter, join } from 'node:path';
import { defaultAdminSession } from '#shared/bootstrap.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { StartRefused } from './start-refused.ts';

/**
 * `npm start -- --router`: beside the controller, an edge router of its own, so that traffic can flow with one
 * command (as the reference's `ziti edge quickstart` gives one). The router is OpenZiti's (`ziti router`, from the
 * `ziti` binary on PATH or named by `ZITI_BIN`), never part of this project: this creates the edge router
 * `local-router` through the management API, writes its configuration under the data directory, enrolls it once and
 * runs it for as long as the controller runs. It listens on 127.0.0.1 alone, which a router beside `npm start`'s
 * controller may name in its certificate (`loopbackRouters`): no host name of its own, no /etc/hosts edit, no root.
 */

/** The flag of `npm start` that runs a local router beside the controller. */
export const ROUTER_FLAG = '--router';
/** The router's name: found again by it at every start, so a restart runs the router enrolled before. */
export const LOCAL_ROUTER_NAME = 'local-router';
/** Where to get `ziti`, for the one line that says it is missing. */
const ZITI_RELEASES = 'https://github.com/openziti/ziti/releases';
/** How long the router has to come online before the banner says to look at its log. */
const ONLINE_WAIT_MS = 30_000;

/** The `ziti` binary to run: `ZITI_BIN`, else the first `ziti` on PATH; refused in one line when there is none. */
export function zitiBinary(env: NodeJS.ProcessEnv = process.env): string {
  const named = env.ZITI_BIN;
  if (named) {
    if (isExecutable(named)) return named;
    throw new StartRefused(`ZITI_BIN names ${named}, which is not an executable file.`);
  }
  for (const directory of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const candidate = join(directory, 'ziti');
    if (isExecutable(candidate)) return candidate;
  }
  throw new StartRefused(
    `${ROUTER_FLAG} runs OpenZiti's router, the \`ziti\` binary, which is not on PATH: get it from ${ZITI_RELEASES} ` +
      '(one binary in the archive for your platform), or set ZITI_BIN to it.',
  );
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface LocalRouterOptions {
  readonly deps: Deps;
  readonly zitiBin: string;
  /** The data directory: the router's files go under `router/`. */
  readonly dataDir: string;
  /** Where the management API answers (`https://localhost:<port>`), and the CA its certificate chains to. */
  readonly apiOrigin: string;
  readonly caPem: string;
  /** Where the router dials the control channel (`tls:<host>:<port>`). */
  readonly ctrlEndpoint: string;
  /** The port of its edge listener on 127.0.0.1, which SDKs connect to. */
  readonly edgePort: number;
}

/** The running router: what the banner says of it, and how it stops. */
export interface LocalRouter {
  readonly lines: readonly string[];
  stop(): Promise<void>;
}

/** The router's configuration (`ziti router`'s `config.yml`, version 3), its files beside it. */
export function localRouterConfig(ctrlEndpoint: string, edgePort: number): string {
  return [
    'v: 3',
    'identity:',
    '  cert: ./client.cert.pem',
    '  server_cert: ./server.cert.pem',
    '  key: ./router.key.pem',
    '  ca: ./ca-chain.cert.pem',
    'ctrl:',
    `  endpoint: ${ctrlEndpoint}`,
    'link:',
    '  dialers:',
    '    - binding: transport',
    'edge:',
    '  heartbeatIntervalSeconds: 60',
    '  csr:',
    '    sans:',
    '      ip:',
    '        - 127.0.0.1',
    'listeners:',
    '  - binding: edge',
    `    address: tls:127.0.0.1:${edgePort}`,
    '    options:',
    `      advertise: 127.0.0.1:${edgePort}`,
    '',
  ].join('\n');
}

/** One request to the controller's own management API, as the default admin; its JSON answer, or a refusal. */
function managementCall(
  options: LocalRouterOptions,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: { data?: Record<string, unknown> & Record<string, unknown>[] } }> {
  const url = new URL(`/edge/management/v1${path}`, options.apiOrigin);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const sent = request(
      url,
      {
        method,
        ca: options.caPem,
        headers: { 'zt-session': token, ...(payload ? { 'content-type': 'application/json' } : {}) },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
      },
    );
    sent.on('error', reject);
    sent.end(payload);
  });
}

/** Runs `ziti` to its end; its output, or a refusal naming the log when it fails. */
function runToEnd(zitiBin: string, args: readonly string[], cwd: string, log: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = openSync(log, 'a');
    const child = spawn(zitiBin, args, { cwd, stdio: ['ignore', out, out] });
    child.once('error', (error) => reject(new StartRefused(`${zitiBin} could not be run: ${error.message}`)));
    child.once('exit', (code) => {
      if (code === 0) resolve();
      else reject(new StartRefused(`\`ziti ${args.join(' ')}\` failed (exit ${code}): see ${log}`));
    });
  });
}

/**
 * The local router, enrolled if it is not yet (its certificate files missing: a new data directory, or files removed,
 * which a re-enroll of the router entity answers) and running; it is shown online when its control channel is up.
 */
export async function startLocalRouter(options: LocalRouterOptions): Promise<LocalRouter> {
  const dir = join(options.dataDir, 'router');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const log = join(dir, 'router.log');
  writeFileSync(join(dir, 'config.yml'), localRouterConfig(options.ctrlEndpoint, options.edgePort), { mode: 0o600 });
  const admin = await defaultAdminSession(options.deps);
  try {
    const call = (method: string, path: string, body?: unknown) =>
      managementCall(options, admin.token, method, path, body);
    const filter = encodeURIComponent(`name="${LOCAL_ROUTER_NAME}"`);
    const found = await call('GET', `/edge-routers?filter=${filter}`);
    let id = (found.body.data as unknown as { id: string }[] | undefined)?.[0]?.id;
    if (!id) {
      const created = await call('POST', '/edge-routers', { name: LOCAL_ROUTER_NAME, isTunnelerEnabled: false });
      if (created.status !== 201) throw new StartRefused(`the local router could not be created: ${created.status}`);
      id = String(created.body.data?.id);
    }
    if (!existsSync(join(dir, 'client.cert.pem'))) {
      let jwt = (await call('GET', `/edge-routers/${id}`)).body.data?.enrollmentJwt;
      if (typeof jwt !== 'string') {
        // Enrolled before, its files gone since: a new enrollment replaces the certificate it had.
        await call('POST', `/edge-routers/${id}/re-enroll`);
        jwt = (await call('GET', `/edge-routers/${id}`)).body.data?.enrollmentJwt;
      }
      if (typeof jwt !== 'string') throw new StartRefused('the local router has no enrollment to enroll with');
      writeFileSync(join(dir, 'router.jwt'), jwt, { mode: 0o600 });
      await runToEnd(options.zitiBin, ['router', 'enroll', 'config.yml', '--jwt', 'router.jwt'], dir, log);
    }
    const out = openSync(log, 'a');
    const child: ChildProcess = spawn(options.zitiBin, ['router', 'run', 'config.yml'], {
      cwd: dir,
      stdio: ['ignore', out, out],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.once('error', () => undefined);
    const online = await waitOnline(call, id, exited);
    const lines = [
      `  router          ${LOCAL_ROUTER_NAME} (${id}), edge listener tls:127.0.0.1:${options.edgePort}, ` +
        (online ? 'online' : `not online yet: see ${log}`),
      `                  its files and log under ${dir}`,
    ];
    return {
      lines,
      async stop() {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        await exited;
      },
    };
  } finally {
    await admin.end();
  }
}

/** Whether the router came online within {@link ONLINE_WAIT_MS} (false at once when it exited). */
async function waitOnline(
  call: (method: string, path: string) => ReturnType<typeof managementCall>,
  id: string,
  exited: Promise<void>,
): Promise<boolean> {
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const deadline = Date.now() + ONLINE_WAIT_MS;
  while (!gone && Date.now() < deadline) {
    if ((await call('GET', `/edge-routers/${id}`)).body.data?.isOnline === true) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}
