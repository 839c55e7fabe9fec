import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { createDeps } from '#functions/create-deps.ts';
import { bootstrap } from '#shared/bootstrap.ts';
import { loadConfig } from '#shared/config.ts';
import { truststoreBundle } from '#shared/pki/trusted-cas.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { ensureTable } from './create-table.ts';
import { startDynamoDbLocal } from './dynamodb-local.ts';
import { type LocalServer, startLocalServer } from './local-server.ts';
import { localStateMachine } from './local-state-machine.ts';
import { privateDirectory } from './private-directory.ts';
import { localServerNames, serverTls } from './server-tls.ts';

/**
 * `npm start`: the whole controller on this machine. DynamoDB Local keeps its data under the data directory, so a
 * restart keeps every identity and session; pointing DYNAMODB_ENDPOINT at another DynamoDB skips the local one.
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

  const dynamo = process.env.DYNAMODB_ENDPOINT
    ? undefined
    : await startDynamoDbLocal({ dataDir: resolve(dataDir, 'dynamodb') });
  const loaded = loadConfig();
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
    mtlsBaseUrl: mtlsPort ? (loaded.mtlsBaseUrl ?? `https://localhost:${mtlsPort}`) : loaded.mtlsBaseUrl,
    sdkBaseUrl: sdkPort ? (loaded.sdkBaseUrl ?? `https://localhost:${sdkPort}`) : loaded.sdkBaseUrl,
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
  await ensureTable(deps.store.db, config.tableName);

  const adminPassword = configuredPassword || randomBytes(18).toString('base64url');
  const result = await bootstrap(deps, { adminUsername, adminPassword });
  const names = localServerNames({
    listenHost: host,
    publicNames: (process.env.CONTROLLER_PUBLIC_NAMES ?? '').split(',').filter(Boolean),
    publicBaseUrl: config.publicBaseUrl,
  });
  const tls = await serverTls(deps, names);
  const server = await startLocalServer({ deps, tls, port, host, clientCertificates: mtlsPort ? 'none' : 'optional' });
  if (mtlsPort) {
    mtlsServer = await startLocalServer({
      deps,
      tls,
      port: mtlsPort,
      host,
      clientCertificates: 'required',
      trustedCaPem: await truststoreBundle(deps),
    });
    sdkServer = await startLocalServer({ deps, tls, port: sdkPort!, host, clientCertificates: 'none' });
  }

  const origin = `https://localhost:${server.port}`;
  const lines = [
    '',
    'Ziti serverless controller (local) is running',
    `  management API  ${origin}/edge/management/v1`,
    `  client API      ${origin}/edge/client/v1`,
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
    '',
  ];
  if (result.adminCreated && !configuredPassword) {
    lines.push(`Default admin created: username "${adminUsername}", password "${adminPassword}"`);
    lines.push('  (shown once; set CONTROLLER_ADMIN_PASSWORD on first start to choose it)');
  } else if (result.adminCreated) {
    lines.push(`Default admin created: username "${adminUsername}" with the password from CONTROLLER_ADMIN_PASSWORD`);
  } else {
    lines.push(`Default admin "${adminUsername}" already exists; its password is the one set on first start.`);
  }
  lines.push(
    'Log in:',
    `  curl -sk -X POST '${origin}/edge/management/v1/authenticate?method=password' \\`,
    `       -H 'content-type: application/json' -d '{"username":"${adminUsername}","password":"<password>"}'`,
    `  ziti edge login localhost:${server.port} -u ${adminUsername} -p <password> -y`,
    'then send the returned token in the zt-session header. Ctrl-C stops the controller.',
    '',
  );
  process.stdout.write(`${lines.join('\n')}\n`);

  const shutdown = async () => {
    await server.close();
    await mtlsServer?.close();
    await sdkServer?.close();
    await dynamo?.stop();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(`controller failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
