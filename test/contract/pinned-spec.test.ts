import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  cachedSpecDir,
  downloadSpec,
  ensureSpecDir,
  locateSpecDir,
  SpecNotFound,
  specLock,
  verifySpecDir,
} from './pinned-spec.ts';

const lock = specLock();
const NOWHERE = '/nonexistent/shared/openziti-spec';
// Nothing from the environment or the workspace: only what a test lays out.
const bare = (cacheRoot: string) => ({ env: {}, siblingDir: NOWHERE, cacheRoot });

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'pinned-spec-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A fresh cache root; with `filled`, holding the locked files as a download would have left them. */
function cacheRoot(filled: boolean): string {
  const root = mkdtempSync(join(scratch, 'cache-'));
  if (filled) {
    const dir = cachedSpecDir(root, lock);
    mkdirSync(dir);
    for (const path of Object.keys(lock.files)) copyFileSync(join(locateSpecDir(), path), join(dir, path));
  }
  return root;
}

describe('the lock', () => {
  it('names one edge-api commit and the SHA-256 of both documents', () => {
    expect(lock.repository).toBe('openziti/edge-api');
    expect(lock.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(Object.keys(lock.files).sort()).toEqual(['client.yml', 'management.yml']);
    for (const digest of Object.values(lock.files)) expect(digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it("matches the documents this machine's tests read", () => {
    const dir = locateSpecDir();
    expect(() => verifySpecDir(dir, 'test', lock)).not.toThrow();
  });
});

describe('locating the documents', () => {
  it('finds them in the download cache when neither OPENZITI_SPEC_DIR nor the copy beside the clone is there', () => {
    const root = cacheRoot(true);
    expect(locateSpecDir(bare(root))).toBe(cachedSpecDir(root, lock));
  });

  it('refuses a cached file whose SHA-256 is not the locked one, and says what to do', () => {
    const root = cacheRoot(true);
    const file = join(cachedSpecDir(root, lock), 'management.yml');
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n# edited\n`);
    expect(() => locateSpecDir(bare(root))).toThrow(
      new RegExp(
        `management\\.yml \\(the download cache\\) is not openziti/edge-api@${lock.commit}'s .*SHA-256 .*delete it`,
      ),
    );
  });

  it('refuses a directory named by OPENZITI_SPEC_DIR that lacks a locked file, naming the variable', () => {
    const dir = mkdtempSync(join(scratch, 'env-'));
    copyFileSync(join(locateSpecDir(), 'client.yml'), join(dir, 'client.yml'));
    expect(() => locateSpecDir({ ...bare(cacheRoot(true)), env: { OPENZITI_SPEC_DIR: dir } })).toThrow(
      /management\.yml \(from OPENZITI_SPEC_DIR\) cannot be read/,
    );
  });

  it('says in one line where the documents go and which variable names a copy, when none is found', () => {
    const root = cacheRoot(false);
    let thrown: unknown;
    try {
      locateSpecDir(bare(root));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SpecNotFound);
    const message = (thrown as Error).message;
    expect(message).not.toContain('\n');
    expect(message).toContain(root);
    expect(message).toMatch(/internet access.*set OPENZITI_SPEC_DIR to a directory holding/);
  });
});

describe('downloading the documents', () => {
  let server: Server;
  let baseUrl: string;
  /** What the server answers for a path, overriding the locked file. */
  const answers = new Map<string, { status: number; body: string }>();

  beforeAll(async () => {
    const source = locateSpecDir();
    server = createServer((request, response) => {
      const path = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname).replace(/^\/edge-api\//, '');
      const answer = answers.get(path);
      if (answer) {
        response.writeHead(answer.status).end(answer.body);
      } else if (path in lock.files) {
        response.writeHead(200).end(readFileSync(join(source, path)));
      } else {
        response.writeHead(404).end('not found');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/edge-api/`;
  });
  afterEach(() => answers.clear());
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('fills the cache with the locked files when no copy is found, and the next lookup finds them there', async () => {
    const root = cacheRoot(false);
    const dir = await ensureSpecDir({ ...bare(root), baseUrl });
    expect(dir).toBe(cachedSpecDir(root, lock));
    expect(readdirSync(dir).sort()).toEqual(['client.yml', 'management.yml']);
    expect(locateSpecDir(bare(root))).toBe(dir);
    expect(readdirSync(root)).toEqual([lock.commit]);
  });

  it('writes nothing when a served file is not the locked one', async () => {
    answers.set('client.yml', { status: 200, body: 'swagger: "2.0"\n' });
    const root = cacheRoot(false);
    await expect(downloadSpec({ cacheRoot: root, baseUrl })).rejects.toThrow(
      /client\.yml did not give the locked client\.yml: its SHA-256 is [0-9a-f]{64}/,
    );
    expect(readdirSync(root)).toEqual([]);
  });

  it('adds why the download failed to the one-line instruction', async () => {
    answers.set('management.yml', { status: 404, body: 'no such file' });
    const root = cacheRoot(false);
    const failure = ensureSpecDir({ ...bare(root), baseUrl });
    await expect(failure).rejects.toThrow(
      /set OPENZITI_SPEC_DIR .*\(The download failed: GET .*management\.yml answered 404/,
    );
    await expect(failure).rejects.not.toThrow(/\n/);
    expect(existsSync(cachedSpecDir(root, lock))).toBe(false);
  });

  it('downloads nothing when a copy is found', async () => {
    const root = cacheRoot(true);
    answers.set('client.yml', { status: 500, body: 'must not be asked' });
    await expect(ensureSpecDir({ ...bare(root), baseUrl })).resolves.toBe(cachedSpecDir(root, lock));
  });
});
