/**
 * Where the contract tests find the OpenZiti Edge API documents, and how a clone gets them.
 *
 * The documents are not part of this repository: `openziti-spec.lock.json` beside this file names the
 * openziti/edge-api commit they come from and each file's SHA-256. {@link locateSpecDir} finds a directory holding
 * exactly those files, in this order:
 * 1. `OPENZITI_SPEC_DIR` (absolute, or relative to the working directory), for an offline machine with a copy;
 * 2. `<repo>/../shared/openziti-spec/`, the copy this workspace keeps beside every clone;
 * 3. `<repo>/node_modules/.cache/openziti-spec/<commit>/`, where {@link ensureSpecDir} downloads them (the test
 *    run's global setup does so once, before any test) when none of these has them.
 *
 * A file whose SHA-256 differs from the lock is refused wherever it was found: the tests would otherwise check the
 * API against documents nobody reviewed.
 *
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The commit and files of the documents the tests are written against. */
export interface SpecLock {
  /** `owner/name` on GitHub. */
  readonly repository: string;
  /** The full commit hash. */
  readonly commit: string;
  /** File path in the repository → its SHA-256, hex. */
  readonly files: Readonly<Record<string, string>>;
}

/** The variable that points at a directory holding the documents, for a machine that cannot download them. */
export const SPEC_DIR_VARIABLE = 'OPENZITI_SPEC_DIR';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LOCK_FILE = fileURLToPath(new URL('./openziti-spec.lock.json', import.meta.url));

/** The lock committed beside this file. */
export function specLock(): SpecLock {
  return JSON.parse(readFileSync(LOCK_FILE, 'utf8')) as SpecLock;
}

/** `<repo>/../shared/openziti-spec`: the copy this workspace lays beside each clone. */
export function siblingSpecDir(): string {
  return resolve(REPO_ROOT, '..', 'shared', 'openziti-spec');
}

/** Where downloaded documents are kept: outside git, inside the clone, so deleting node_modules deletes them too. */
export function defaultCacheRoot(): string {
  return join(REPO_ROOT, 'node_modules', '.cache', 'openziti-spec');
}

/** The directory under `cacheRoot` that holds the documents of the locked commit. */
export function cachedSpecDir(cacheRoot: string = defaultCacheRoot(), lock: SpecLock = specLock()): string {
  return join(cacheRoot, lock.commit);
}

/** Replaces GitHub as the download's origin: only to try the download against a server on this machine. */
export const BASE_URL_VARIABLE = 'OPENZITI_SPEC_BASE_URL';

/** Where to download each locked file from: GitHub's raw files at the locked commit. */
export function defaultBaseUrl(lock: SpecLock = specLock(), env: NodeJS.ProcessEnv = process.env): string {
  return env[BASE_URL_VARIABLE] || `https://raw.githubusercontent.com/${lock.repository}/${lock.commit}/`;
}

/** No directory holds the documents: the one-line instruction for what to do. */
export class SpecNotFound extends Error {
  constructor(cacheRoot: string, lock: SpecLock) {
    super(
      `The OpenZiti Edge API documents (${lock.repository}@${lock.commit.slice(0, 12)}: ` +
        `${Object.keys(lock.files).join(', ')}) are not on this machine: run the tests once with internet access ` +
        `to download them into ${displayPath(cacheRoot)}, or set ${SPEC_DIR_VARIABLE} to a directory holding ` +
        'those files from that commit.',
    );
    this.name = 'SpecNotFound';
  }
}

function displayPath(path: string): string {
  const inside = relative(process.cwd(), path);
  return inside.startsWith('..') ? path : inside || '.';
}

function sha256(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** Why a file is not the locked one, or undefined when it is. */
function fileProblem(content: Buffer, expected: string): string | undefined {
  const actual = sha256(content);
  return actual === expected ? undefined : `its SHA-256 is ${actual}, the lock records ${expected}`;
}

/**
 * Throws unless `dir` holds every locked file with its locked SHA-256; `origin` says how the directory was chosen,
 * so the message can say what to change.
 */
export function verifySpecDir(dir: string, origin: string, lock: SpecLock = specLock()): void {
  for (const [path, expected] of Object.entries(lock.files)) {
    const file = join(dir, path);
    let content: Buffer;
    try {
      content = readFileSync(file);
    } catch (error) {
      throw new Error(`${file} (${origin}) cannot be read: ${(error as Error).message}`);
    }
    const problem = fileProblem(content, expected);
    if (problem) {
      throw new Error(
        `${file} (${origin}) is not ${lock.repository}@${lock.commit}'s ${path}: ${problem} ` +
          `(test/contract/openziti-spec.lock.json); replace the directory with that commit's files, or delete it.`,
      );
    }
  }
}

export interface LocateOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly siblingDir?: string;
  readonly cacheRoot?: string;
  readonly lock?: SpecLock;
}

/** The directory holding the locked documents (see the module's comment for the order), verified; never downloads. */
export function locateSpecDir(options: LocateOptions = {}): string {
  const env = options.env ?? process.env;
  const lock = options.lock ?? specLock();
  const cacheRoot = options.cacheRoot ?? defaultCacheRoot();
  const fromEnv = env[SPEC_DIR_VARIABLE];
  if (fromEnv !== undefined && fromEnv !== '') {
    const dir = resolve(fromEnv);
    verifySpecDir(dir, `from ${SPEC_DIR_VARIABLE}`, lock);
    return dir;
  }
  const sibling = options.siblingDir ?? siblingSpecDir();
  if (existsSync(sibling)) {
    verifySpecDir(sibling, 'the copy beside the clone', lock);
    return sibling;
  }
  const cached = cachedSpecDir(cacheRoot, lock);
  if (existsSync(cached)) {
    verifySpecDir(cached, 'the download cache', lock);
    return cached;
  }
  throw new SpecNotFound(cacheRoot, lock);
}

export interface DownloadOptions {
  readonly cacheRoot?: string;
  /** The URL each locked path is resolved against; by default {@link defaultBaseUrl}. */
  readonly baseUrl?: string;
  readonly lock?: SpecLock;
  /** Per file; a machine without a route out should fail, not hang the test run. */
  readonly timeoutMs?: number;
}

/**
 * Downloads the locked files into the cache and returns its directory. Each file must have its locked SHA-256
 * before anything is written into place; the files land in a temporary directory renamed at the end, so an
 * interrupted download leaves no half-filled cache behind.
 */
export async function downloadSpec(options: DownloadOptions = {}): Promise<string> {
  const lock = options.lock ?? specLock();
  const cacheRoot = options.cacheRoot ?? defaultCacheRoot();
  const baseUrl = options.baseUrl ?? defaultBaseUrl(lock);
  const contents = new Map<string, Buffer>();
  for (const [path, expected] of Object.entries(lock.files)) {
    const url = new URL(path, baseUrl);
    const response = await fetch(url, { signal: AbortSignal.timeout(options.timeoutMs ?? 60_000) });
    if (!response.ok) throw new Error(`GET ${url} answered ${response.status} ${response.statusText}`);
    const content = Buffer.from(await response.arrayBuffer());
    const problem = fileProblem(content, expected);
    if (problem) throw new Error(`GET ${url} did not give the locked ${path}: ${problem}`);
    contents.set(path, content);
  }
  const target = cachedSpecDir(cacheRoot, lock);
  const staging = join(cacheRoot, `.download-${process.pid}-${randomBytes(4).toString('hex')}`);
  mkdirSync(staging, { recursive: true });
  try {
    for (const [path, content] of contents) writeFileSync(join(staging, path), content);
    renameSync(staging, target);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    // Another run may have filled the cache first; its files are as good as ours once they verify.
    if (!existsSync(target)) throw error;
  }
  verifySpecDir(target, 'the download cache', lock);
  return target;
}

/**
 * The directory holding the locked documents, downloading them into the cache when no directory has them. A
 * directory whose files differ from the lock is refused, never replaced.
 */
export async function ensureSpecDir(options: LocateOptions & DownloadOptions = {}): Promise<string> {
  try {
    return locateSpecDir(options);
  } catch (error) {
    if (!(error instanceof SpecNotFound)) throw error;
    try {
      return await downloadSpec(options);
    } catch (failure) {
      const reason = failure instanceof Error ? (failure.cause ?? failure) : failure;
      throw new Error(
        `${error.message} (The download failed: ${reason instanceof Error ? reason.message : String(reason)}.)`,
      );
    }
  }
}
