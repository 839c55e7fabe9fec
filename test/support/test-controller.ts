import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { ensureTable } from '#local/create-table.ts';
import { type LocalServer, startLocalServer } from '#local/local-server.ts';
import { localStateMachine } from '#local/local-state-machine.ts';
import { localServerNames, serverTls } from '#local/server-tls.ts';
import { bootstrap } from '#shared/bootstrap.ts';
import { type ControllerConfig, loadConfig } from '#shared/config.ts';
import { createDeps, type Deps } from '#shared/deps.ts';
import { INTEGRITY_CORE, type IntegrityCore } from '#shared/integrity/integrity-run.ts';
import { createLogger } from '#shared/log/logger.ts';
import { type HttpResponse, httpsCall, type RequestOptions } from './https-client.ts';

export const ADMIN_USERNAME = 'admin';
export const ADMIN_PASSWORD = 'admin-password-for-tests';

/** The controller as a test sees it: the local HTTPS server on its own fresh table in the shared DynamoDB Local. */
export interface TestController {
  readonly deps: Deps;
  readonly server: LocalServer;
  readonly origin: string;
  /** The network's root CA (PEM): what a client trusting this controller holds. */
  readonly rootCertPem: string;
  /** Every log line the controller wrote, for asserting that no secret reaches a log. */
  readonly logLines: readonly string[];
  call(method: string, path: string, options?: RequestOptions): Promise<HttpResponse>;
  /** Moves the controller's clock forward (session expiry, disabled-until). */
  advanceClock(ms: number): void;
  /** Logs in with username and password and returns the session token. */
  login(username?: string, password?: string): Promise<string>;
  close(): Promise<void>;
}

export async function startTestController(
  overrides: Partial<ControllerConfig> = {},
  integrityCore: IntegrityCore = INTEGRITY_CORE,
): Promise<TestController> {
  const tableName = `test-${randomUUID()}`;
  const config: ControllerConfig = {
    ...loadConfig({}),
    tableName,
    snapshots: { kind: 'file', directory: join(tmpdir(), 'ziti-test-snapshots', tableName) },
    dynamoDbEndpoint: inject('dynamoEndpoint'),
    ...overrides,
  };
  const base = createDeps(config);
  const logLines: string[] = [];
  let clockOffsetMs = 0;
  const deps: Deps = {
    ...base,
    logger: createLogger({}, { level: 'debug', write: (line) => logLines.push(line) }),
    now: () => new Date(Date.now() + clockOffsetMs),
    stateMachine: localStateMachine(() => deps, integrityCore),
  };
  await ensureTable(deps.store.db, config.tableName);
  await bootstrap(deps, { adminUsername: ADMIN_USERNAME, adminPassword: ADMIN_PASSWORD });
  // The controller's own server identity, from its network CA, as `npm start` serves it; clients trust the root.
  const material = await serverTls(deps, localServerNames({}));
  const server = await startLocalServer({ deps, tls: material, port: 0 });
  const call = (method: string, path: string, options?: RequestOptions) =>
    httpsCall(server.origin, material.rootCertPem, method, path, options);
  return {
    deps,
    server,
    origin: server.origin,
    rootCertPem: material.rootCertPem,
    logLines,
    call,
    advanceClock: (ms) => {
      clockOffsetMs += ms;
    },
    login: async (username = ADMIN_USERNAME, password = ADMIN_PASSWORD) => {
      const response = await call('POST', '/edge/management/v1/authenticate?method=password', {
        body: { username, password },
      });
      if (response.status !== 200) throw new Error(`login failed: ${response.status} ${response.text}`);
      return response.body.data.token as string;
    },
    close: async () => {
      await server.close();
      deps.store.db.destroy();
    },
  };
}
