import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { createCtrlEndpoint } from '#ctrl-channel/ctrl-endpoint.ts';
import { createDeps } from '#functions/create-deps.ts';
import { removeEndedSessionsOnCommit } from '#shared/auth/api-session-store.ts';
import { bootstrap, isDefaultAdminPassword, setDefaultAdminPassword } from '#shared/bootstrap.ts';
import { loadConfig } from '#shared/config.ts';
import { ctrlAddressOf } from '#shared/net/ctrl-address.ts';
import { networkCa } from '#shared/pki/network-ca.ts';
import { truststoreBundle } from '#shared/pki/trusted-cas.ts';
import type { Deps } from '#shared/ports/deps.ts';
import {
  ADMIN_PASSWORD_FILE,
  adminLoginLines,
  type KnownPassword,
  keepGeneratedPassword,
  keptPassword,
  RESET_FLAG,
} from './admin-login.ts';
import { ensureTable } from './create-table.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from './dynamodb-local.ts';
import { startExtraEndpoint } from './extra-endpoint.ts';
import { ROUTER_FLAG, startLocalRouter, zitiBinary } from './local-router.ts';
import { type LocalServer, type LocalServerOptions, startLocalServer } from './local-server.ts';
import { localStateMachine } from './local-state-machine.ts';
import { privateDirectory } from './private-directory.ts';
import { startScheduledTasks } from './scheduled-tasks.ts';
import { localServerNames, serverTls } from './server-tls.ts';
import { checkPortsFree, lockDataDirectory, portRefusal } from './start-checks.ts';
import { StartRefused } from './start-refused.ts';

/** Starts a listener; a port taken meanwhile, or not allowed, names the setting that chooses it. */
async function listen(options: LocalServerOptions, setting: string): Promise<LocalServer> {
  try {
    return await startLocalServer(options);
  } catch (error) {
    throw portRefusal(error as NodeJS.ErrnoException, options.port, options.host ?? '127.0.0.1', setting);
  }
}

let dynamo: DynamoDbLocal | undefined;

/**
 * `npm start`: the whole controller on this machine. DynamoDB Local keeps its data under the data directory, so a
 * restart keeps every identity and session; pointing DYNAMODB_ENDPOINT at another DynamoDB skips the local one.
 * `npm start -- --reset-admin-password` also gives the default admin a new password.
 */
async function main(): Promise<void> {
  // Private before anything is written into it, and tightened if an earlier start left it open.
  const dataDir = privateDirectory(resolve(process.env.CONTROLLER_DATA_DIR || '.data'));
  const port = Number(process.env.CONTROLLER_PORT || 1280);
  // A second listener that requires client certificates, as AWS's mTLS domain does beside the plain one.
  const mtlsPort = process.env.CONTROLLER_MTLS_PORT ? Number(process.env.CONTROLLER_MTLS_PORT) : undefined;
  // And the SDKs' front door: the plain address one-time-token JWTs name, whose /version sends SDKs to the mTLS one.
  const sdkPort = mtlsPort ? Number(process.env.CONTROLLER_SDK_PORT || mtlsPort + 1) : undefined;
  const host = process.env.CONTROLLER_HOST || '127.0.0.1';
  const adminUsername = process.env.CONTROLLER_ADMIN_USERNAME || 'admin';
  const configuredPassword = process.env.CONTROLLER_ADMIN_PASSWORD;
  const resetPassword = process.argv.slice(2).includes(RESET_FLAG);
  // `--router`: OpenZiti's router beside the controller, found before anything starts (one line when it is missing).
  const zitiBin = process.argv.slice(2).includes(ROUTER_FLAG) ? zitiBinary() : undefined;
  const routerPort = Number(process.env.CONTROLLER_ROUTER_PORT || 3022);
  // A second control channel endpoint, as a second ECS task: routers whose `ctrl.endpoint` names this port connect
  // there, and circuits across routers on both go through their relays.
  const extraCtrlPort = process.env.CONTROLLER_EXTRA_CTRL_PORT
    ? Number(process.env.CONTROLLER_EXTRA_CTRL_PORT)
    : undefined;
  const passwordFile = resolve(dataDir, ADMIN_PASSWORD_FILE);
  // Before anything changes: no other controller on this data directory, and every port free.
  lockDataDirectory(dataDir);
  await checkPortsFree([
    { port, host, setting: 'CONTROLLER_PORT' },
    ...(mtlsPort ? [{ port: mtlsPort, host, setting: 'CONTROLLER_MTLS_PORT' }] : []),
    ...(sdkPort ? [{ port: sdkPort, host, setting: 'CONTROLLER_SDK_PORT' }] : []),
    ...(zitiBin ? [{ port: routerPort, host: '127.0.0.1', setting: 'CONTROLLER_ROUTER_PORT' }] : []),
    ...(extraCtrlPort ? [{ port: extraCtrlPort, host, setting: 'CONTROLLER_EXTRA_CTRL_PORT' }] : []),
  ]);

  // Until the controller serves, an interrupt still stops what has started.
  const stopStarting = async () => {
    await dynamo?.stop();
    process.exit(130);
  };
  process.once('SIGINT', stopStarting);
  process.once('SIGTERM', stopStarting);
  dynamo = process.env.DYNAMODB_ENDPOINT
    ? undefined
    : await startDynamoDbLocal({ dataDir: resolve(dataDir, 'dynamodb') });
  const loaded = loadConfig();
  const mtlsBaseUrl = mtlsPort ? (loaded.mtlsBaseUrl ?? `https://localhost:${mtlsPort}`) : loaded.mtlsBaseUrl;
  const config = {
    ...loaded,
    dynamoDbEndpoint: process.env.DYNAMODB_ENDPOINT || dynamo?.endpoint,
    // The network's PKI keys live in the data directory next to the table, unless KMS keys or another directory are set.
    pkiKeys:
      loaded.pkiKeys.kind === 'memory'
        ? { kind: 'files' as const, directory: resolve(dataDir, 'pki') }
        : loaded.pkiKeys,
    // So do the key that seals stored secrets (TOTP seeds) and its data keys.
    secretKey:
      loaded.secretKey.kind === 'memory'
        ? { kind: 'files' as const, directory: resolve(dataDir, 'pki') }
        : loaded.secretKey,
    mtlsBaseUrl,
    sdkBaseUrl: sdkPort ? (loaded.sdkBaseUrl ?? `https://localhost:${sdkPort}`) : loaded.sdkBaseUrl,
    // With an mTLS listener the control channel is served there alone (the plain one refuses `ziti-ctrl`), so that is
    // the address routers are told of, not the API's the request came in on.
    ctrlAddress: loaded.ctrlAddress ?? (mtlsPort && mtlsBaseUrl ? ctrlAddressOf(undefined, mtlsBaseUrl) : undefined),
    // A router on this machine may listen on 127.0.0.1 (no name of its own, no /etc/hosts edit); only here.
    loopbackRouters: true,
    // Snapshots are JSON Lines exports beside the table.
    snapshots: process.env.SNAPSHOT_DIR
      ? loaded.snapshots
      : { kind: 'file' as const, directory: resolve(dataDir, 'snapshots') },
  };
  // Integrity runs execute the deployed state machine's definition in this process; a CA verified or deleted
  // republishes the truststore, which locally is the mTLS listener's CA bundle.
  let mtlsServer: LocalServer | undefined;
  let sdkServer: LocalServer | undefined;
  const deps: Deps = {
    ...createDeps(config),
    stateMachine: localStateMachine(() => deps),
    truststore: { publish: async (bundlePem) => mtlsServer?.trust(bundlePem) },
  };
  // One process serves every function: the sessions a change ends leave the table as in the functions that end them.
  removeEndedSessionsOnCommit(deps);
  await ensureTable(deps.store.db, config.tableName);

  const adminPassword = configuredPassword || randomBytes(18).toString('base64url');
  const result = await bootstrap(deps, { adminUsername, adminPassword });
  if (resetPassword && !result.adminCreated) {
    await setDefaultAdminPassword(deps, adminPassword).catch((error: Error) => {
      throw new StartRefused(`${RESET_FLAG}: ${error.message}.`);
    });
  }
  if (!configuredPassword && (result.adminCreated || resetPassword)) keepGeneratedPassword(passwordFile, adminPassword);
  const known: KnownPassword | undefined = configuredPassword
    ? { kind: 'setting', password: configuredPassword }
    : keptPassword(passwordFile);
  const works = known ? await isDefaultAdminPassword(deps, known.password).catch(() => false) : false;
  const names = localServerNames({
    listenHost: host,
    publicNames: (process.env.CONTROLLER_PUBLIC_NAMES ?? '').split(',').filter(Boolean),
    publicBaseUrl: config.publicBaseUrl,
  });
  const tls = await serverTls(deps, names);
  // The routers' control channel, on the listener that asks for client certificates (ALPN `ziti-ctrl`).
  // With a second endpoint, each relays the other's routers' messages, over the loopback.
  const relay = extraCtrlPort ? { tls, host: '127.0.0.1', port: 0 } : undefined;
  const ctrlEndpoint = createCtrlEndpoint({ deps, ...(relay ? { relay } : {}) });
  const extraEndpoint =
    extraCtrlPort && relay
      ? await startExtraEndpoint({ deps, tls, relay }, { port: extraCtrlPort, host }).catch((error: Error) => {
          throw new StartRefused(`CONTROLLER_EXTRA_CTRL_PORT: ${error.message}.`);
        })
      : undefined;
  const scheduled = startScheduledTasks(deps);
  const server = await listen(
    {
      deps,
      tls,
      port,
      host,
      clientCertificates: mtlsPort ? 'none' : 'optional',
      ...(mtlsPort ? {} : { ctrlEndpoint }),
    },
    'CONTROLLER_PORT',
  );
  if (mtlsPort) {
    mtlsServer = await listen(
      {
        deps,
        tls,
        port: mtlsPort,
        host,
        clientCertificates: 'required',
        trustedCaPem: await truststoreBundle(deps),
        ctrlEndpoint,
      },
      'CONTROLLER_MTLS_PORT',
    );
    sdkServer = await listen({ deps, tls, port: sdkPort!, host, clientCertificates: 'none' }, 'CONTROLLER_SDK_PORT');
  }

  const origin = `https://localhost:${server.port}`;
  const router = zitiBin
    ? await startLocalRouter({
        deps,
        zitiBin,
        dataDir,
        apiOrigin: origin,
        caPem: (await networkCa(deps)).rootCertPem,
        ctrlEndpoint: ctrlAddressOf(config.ctrlAddress, origin),
        edgePort: routerPort,
      })
    : undefined;
  const lines = [
    '',
    'Ziti serverless controller (local) is running',
    `  management API  ${origin}/edge/management/v1`,
    `  client API      ${origin}/edge/client/v1`,
    `  fabric API      ${origin}/fabric/v1  (ziti fabric list ..., with the management API's admin session)`,
    `  version         ${origin}/version`,
    ...(mtlsServer
      ? [
          `  mTLS            https://localhost:${mtlsServer.port}  (client certificates required, as AWS's mTLS domain)`,
          `  SDK front door  https://localhost:${sdkServer?.port}  (one-time-token JWTs name it; sends SDKs to mTLS)`,
        ]
      : []),
    `  data directory  ${dataDir}  (DynamoDB: ${config.dynamoDbEndpoint}, PKI keys: ${config.pkiKeys.kind})`,
    `  TLS             a certificate for ${names.join(', ')} from the network CA; trust the network with:`,
    `                  curl -sk ${origin}/.well-known/est/cacerts | openssl base64 -d | openssl pkcs7 -inform DER -print_certs > ziti-network-ca.pem`,
    ...(router?.lines ?? []),
    ...(extraEndpoint
      ? [
          `  2nd endpoint    tls:localhost:${extraEndpoint.port}  (routers' control channel, as a second task: routes across the two are relayed)`,
        ]
      : []),
    '',
  ];
  const username = result.adminUsername ?? adminUsername;
  if (result.adminCreated) lines.push(`Default admin "${username}" created.`);
  else if (resetPassword) lines.push(`Default admin "${username}": new password set.`);
  lines.push(
    ...adminLoginLines({
      origin,
      port: server.port,
      username,
      known,
      works,
      onTerminal: process.stdout.isTTY === true,
      passwordFile,
    }),
    'Ctrl-C stops the controller.',
    '',
  );
  process.stdout.write(`${lines.join('\n')}\n`);

  const shutdown = async () => {
    await router?.stop();
    ctrlEndpoint.close();
    await extraEndpoint?.close();
    scheduled.stop();
    await server.close();
    await mtlsServer?.close();
    await sdkServer?.close();
    await dynamo?.stop();
    process.exit(0);
  };
  process.removeListener('SIGINT', stopStarting);
  process.removeListener('SIGTERM', stopStarting);
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch(async (error: unknown) => {
  const detail = error instanceof StartRefused ? error.message : ((error as Error).stack ?? String(error));
  process.stderr.write(`controller failed to start: ${detail}\n`);
  await dynamo?.stop();
  process.exit(1);
});
