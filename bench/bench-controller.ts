import { type CtrlEndpoint, createCtrlEndpoint } from '#ctrl-channel/ctrl-endpoint.ts';
import { createDeps } from '#functions/create-deps.ts';
import { ensureTable } from '#local/create-table.ts';
import { type LocalServer, startLocalServer } from '#local/local-server.ts';
import type { TlsMaterial } from '#local/tls-certificate.ts';
import { bootstrap } from '#shared/bootstrap.ts';
import type { ControllerConfig, RequestLogConfig } from '#shared/config.ts';
import { createLogger } from '#shared/log/logger.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { type BenchClient, createBenchClient } from './bench-client.ts';
import { benchConfig } from './bench-config.ts';
import { type BenchMeter, createBenchMeter } from './bench-meter.ts';

/** Where a bench part's controller finds DynamoDB Local, its TLS material, and the admin to bootstrap. */
export interface BenchControllerOptions {
  readonly dynamoDbEndpoint: string;
  readonly tls: TlsMaterial;
  readonly adminUsername: string;
  readonly adminPassword: string;
}

/** A bench part's own controller: a bootstrapped table of its own behind a local HTTPS server, metered. */
export interface BenchController {
  readonly deps: Deps;
  readonly meter: BenchMeter;
  readonly server: LocalServer;
  readonly origin: string;
  /** A kept-alive HTTPS client of the server (the bench's requests are sequential over it). */
  readonly client: BenchClient;
  /** The routers' control channel on the server's address, when the part asked for it (`withRouters`). */
  readonly ctrl: CtrlEndpoint | undefined;
  /** Moves the controller's clock (TOTP steps, once-a-minute touches); the offset adds up. */
  advanceClock(ms: number): void;
  /**
   * Sets how many successful reads the handlers log one of (`RequestLogConfig.sampleRate`; 1, every one, to begin
   * with, as `npm start` does): a deployed function's rate makes its requests do what the stack's do, leaving out
   * the summary line of most reads.
   */
  sampleRequestLogs(sampleRate: number): void;
  close(): Promise<void>;
}

/**
 * Starts a controller on the table `tableName` with a clock the part may move; `configured` adjusts the configuration
 * first (a trusted JWKS provider, say). Its logger prints each line through `writeLog`: nowhere unless the part
 * weighs what is logged.
 */
export async function startBenchController(
  tableName: string,
  options: BenchControllerOptions,
  configured: (config: ControllerConfig) => ControllerConfig = (config) => config,
  writeLog: (line: string) => void = () => undefined,
  withRouters = false,
): Promise<BenchController> {
  const chosen = configured(benchConfig(tableName, options.dynamoDbEndpoint));
  // The handlers read the rate with each request: the part may change it between runs (`sampleRequestLogs`).
  const requestLog: { -readonly [K in keyof RequestLogConfig]: RequestLogConfig[K] } = { ...chosen.requestLog };
  const config: ControllerConfig = { ...chosen, requestLog };
  let clockOffsetMs = 0;
  const deps: Deps = {
    ...createDeps(config),
    logger: createLogger({}, { write: writeLog }),
    now: () => new Date(Date.now() + clockOffsetMs),
  };
  const meter = createBenchMeter(deps);
  await ensureTable(deps.store.db, config.tableName);
  await bootstrap(deps, { adminUsername: options.adminUsername, adminPassword: options.adminPassword });
  // Routers connect to the API's address with ALPN `ziti-ctrl`, as under `npm start`.
  const ctrl = withRouters ? createCtrlEndpoint({ deps }) : undefined;
  const server = await startLocalServer({
    deps,
    tls: options.tls,
    port: 0,
    invokeAs: meter.timeHandler,
    ...(ctrl ? { ctrlEndpoint: ctrl } : {}),
  });
  meter.timeServer(server.server);
  const origin = `https://127.0.0.1:${server.port}`;
  const client = createBenchClient(origin, options.tls.cert);
  return {
    deps,
    meter,
    server,
    origin,
    client,
    ctrl,
    advanceClock: (ms) => {
      clockOffsetMs += ms;
    },
    sampleRequestLogs: (sampleRate) => {
      requestLog.sampleRate = sampleRate;
    },
    async close() {
      ctrl?.close();
      client.close();
      await server.close();
      deps.store.db.destroy();
    },
  };
}
