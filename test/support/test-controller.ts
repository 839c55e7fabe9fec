import { randomUUID } from 'node:crypto';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { ChannelTimings } from '#ctrl-channel/channel.ts';
import type { ControlFeatureFactory } from '#ctrl-channel/control-plane.ts';
import { type CtrlEndpoint, createCtrlEndpoint } from '#ctrl-channel/ctrl-endpoint.ts';
import { createDeps } from '#functions/create-deps.ts';
import { ensureTable } from '#local/create-table.ts';
import { type LocalServer, startLocalServer } from '#local/local-server.ts';
import { localStateMachine } from '#local/local-state-machine.ts';
import { localServerNames, serverTls } from '#local/server-tls.ts';
import { removeEndedSessionsOnCommit } from '#shared/auth/api-session-store.ts';
import { bootstrap } from '#shared/bootstrap.ts';
import { type ControllerConfig, loadConfig } from '#shared/config.ts';
import { INTEGRITY_CORE, type IntegrityCore } from '#shared/integrity/integrity-run.ts';
import { createLogger, DEFAULT_SERVICE_NAME } from '#shared/log/logger.ts';
import { createMetrics } from '#shared/log/metrics.ts';
import { truststoreBundle } from '#shared/pki/trusted-cas.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { StateMachine } from '#shared/ports/state-machine.ts';
import { type HttpResponse, httpsCall, type RequestOptions } from './https-client.ts';
import { asTableUser, holdToTableGrants } from './table-grants.ts';

export const ADMIN_USERNAME = 'admin';
export const ADMIN_PASSWORD = 'admin-password-for-tests';

/** The controller as a test sees it: the local HTTPS server on its own fresh table in the shared DynamoDB Local. */
export interface TestController {
  readonly deps: Deps;
  readonly server: LocalServer;
  readonly origin: string;
  /** The network's root CA (PEM): what a client trusting this controller holds. */
  readonly rootCertPem: string;
  /** With `shape: 'aws'`, the listener that requires client certificates. */
  readonly mtls: LocalServer | undefined;
  /** With `shape: 'aws'`, the SDKs' front door: plain, named by one-time-token JWTs, sending SDKs on to `mtls`. */
  readonly sdk: LocalServer | undefined;
  /** The routers' control channel endpoint, served on the one listener (or the mTLS one) under ALPN `ziti-ctrl`. */
  readonly ctrl: CtrlEndpoint;
  /** Every log line the controller wrote, for asserting that no secret reaches a log. */
  readonly logLines: readonly string[];
  call(method: string, path: string, options?: RequestOptions): Promise<HttpResponse>;
  /** Moves the controller's clock forward (session expiry, disabled-until), or back again by a negative amount. */
  advanceClock(ms: number): void;
  /**
   * Stops the controller's clock at this instant (it moves only by `advanceClock`) until the returned function is
   * called: for asserting what happens within a lifetime however slowly a loaded machine runs the requests.
   */
  holdClock(): () => void;
  /** Logs in with username and password and returns the session token. */
  login(username?: string, password?: string): Promise<string>;
  /** Closes the listeners and the client; fails if IAM would have refused any command a function sent meanwhile. */
  close(): Promise<void>;
}

/** A port nothing listens on now, for a listener whose address the configuration must name before it starts. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * The local integrity state machine as the integrity function: its Tasks run in the background of the database
 * group's request that starts the run, but in AWS they run in the integrity function, under that function's grant.
 */
function integrityFunction(stateMachine: StateMachine): StateMachine {
  return { start: (input) => asTableUser('integrity', () => stateMachine.start(input)) };
}

/**
 * Starts a controller. `shape: 'aws'` gives it API Gateway's ways in: the plain listener, which never asks for a client
 * certificate, an mTLS listener that requires one chaining to the truststore (`mtls`), and the SDKs' front door
 * (`sdk`), a plain listener whose `/version` sends SDKs on to the mTLS one (`ziti-ctrl-address`). The one listener
 * builds API Gateway's proxy events, or with `frontDoor: 'alb'` (in the overrides, or `FRONT_DOOR=alb` in the
 * environment of the test run) the load balancer's target events, carrying the handshake's certificate in a header.
 */
export async function startTestController(
  overrides: Partial<ControllerConfig> = {},
  integrityCore: IntegrityCore = INTEGRITY_CORE,
  shape: 'one-listener' | 'aws' = 'one-listener',
  ctrlTimings?: ChannelTimings,
  ctrlFeatures?: readonly ControlFeatureFactory[],
  ctrlPresenceRefreshMs?: number,
  ctrlRandom?: () => number,
  ctrlRelay?: boolean,
): Promise<TestController> {
  const tableName = `test-${randomUUID()}`;
  const mtlsPort = shape === 'aws' ? await freePort() : undefined;
  const sdkPort = shape === 'aws' ? await freePort() : undefined;
  const config: ControllerConfig = {
    // A test run may put every one-listener controller behind the load balancer's events (FRONT_DOOR=alb); AWS's
    // three listeners are API Gateway's.
    ...loadConfig(shape === 'aws' ? {} : { FRONT_DOOR: process.env.FRONT_DOOR }),
    tableName,
    snapshots: { kind: 'file', directory: join(tmpdir(), 'ziti-test-snapshots', tableName) },
    dynamoDbEndpoint: inject('dynamoEndpoint'),
    // As `npm start` with an mTLS listener: the control channel is served there, so routers are told of it.
    ...(mtlsPort
      ? {
          mtlsBaseUrl: `https://localhost:${mtlsPort}`,
          sdkBaseUrl: `https://localhost:${sdkPort}`,
          ctrlAddress: `tls:localhost:${mtlsPort}`,
        }
      : {}),
    ...overrides,
  };
  const base = createDeps(config);
  const logLines: string[] = [];
  let clockOffsetMs = 0;
  let heldAt: number | undefined;
  const logger = createLogger({}, { level: 'debug', write: (line) => logLines.push(line) });
  const deps: Deps = {
    ...base,
    logger,
    metrics: createMetrics(config.metricsNamespace, DEFAULT_SERVICE_NAME, logger),
    now: () => new Date((heldAt ?? Date.now()) + clockOffsetMs),
    stateMachine: integrityFunction(localStateMachine(() => deps, integrityCore)),
    truststore: { publish: async (bundlePem) => mtls?.trust(bundlePem) },
  };
  // The routers' notices a write makes carry the instant the endpoint's poll reads by: this clock, moved or not.
  deps.store.now = deps.now;
  let mtls: LocalServer | undefined;
  let sdk: LocalServer | undefined;
  // As the functions that end sessions: the first of them leave the table right after the change.
  removeEndedSessionsOnCommit(deps);
  await ensureTable(deps.store.db, config.tableName);
  const tableRefusals = holdToTableGrants(deps.store.db);
  await asTableUser('bootstrap', () =>
    bootstrap(deps, { adminUsername: ADMIN_USERNAME, adminPassword: ADMIN_PASSWORD }),
  );
  // The controller's own server identity, from its network CA, as `npm start` serves it; clients trust the root.
  const material = await serverTls(deps, localServerNames({}));
  const ctrl = createCtrlEndpoint({
    deps,
    ...(ctrlTimings ? { timings: ctrlTimings } : {}),
    ...(ctrlFeatures ? { features: ctrlFeatures } : {}),
    ...(ctrlPresenceRefreshMs ? { presenceRefreshMs: ctrlPresenceRefreshMs } : {}),
    ...(ctrlRandom ? { random: ctrlRandom } : {}),
    ...(ctrlRelay ? { relay: { tls: material, host: '127.0.0.1', port: 0 } } : {}),
  });
  await ctrl.ready;
  const server = await startLocalServer({
    deps,
    tls: material,
    port: 0,
    clientCertificates: mtlsPort ? 'none' : 'optional',
    invokeAs: asTableUser,
    ...(mtlsPort ? {} : { ctrlEndpoint: ctrl }),
  });
  if (mtlsPort) {
    mtls = await startLocalServer({
      deps,
      tls: material,
      port: mtlsPort,
      clientCertificates: 'required',
      trustedCaPem: await truststoreBundle(deps),
      invokeAs: asTableUser,
      ctrlEndpoint: ctrl,
    });
    sdk = await startLocalServer({
      deps,
      tls: material,
      port: sdkPort!,
      clientCertificates: 'none',
      invokeAs: asTableUser,
    });
  }
  const call = (method: string, path: string, options?: RequestOptions) =>
    httpsCall(server.origin, material.rootCertPem, method, path, options);
  return {
    deps,
    server,
    origin: server.origin,
    rootCertPem: material.rootCertPem,
    mtls,
    sdk,
    ctrl,
    logLines,
    call,
    advanceClock: (ms) => {
      clockOffsetMs += ms;
    },
    holdClock: () => {
      heldAt = Date.now();
      return () => {
        heldAt = undefined;
      };
    },
    login: async (username = ADMIN_USERNAME, password = ADMIN_PASSWORD) => {
      const response = await call('POST', '/edge/management/v1/authenticate?method=password', {
        body: { username, password },
      });
      if (response.status !== 200) throw new Error(`login failed: ${response.status} ${response.text}`);
      return response.body.data.token as string;
    },
    close: async () => {
      ctrl.close();
      await server.close();
      await mtls?.close();
      await sdk?.close();
      deps.store.db.destroy();
      if (tableRefusals.length > 0) {
        const refused = tableRefusals.map(
          ({ user, action, command, index }) => `${user}: ${action}${index ? ` on index ${index}` : ''} (${command})`,
        );
        throw new Error(`IAM would have refused what functions sent to the table: ${[...new Set(refused)].join('; ')}`);
      }
    },
  };
}
