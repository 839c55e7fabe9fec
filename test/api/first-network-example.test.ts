import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD } from '../support/test-controller.ts';
import { useTestController } from '../support/use-controller.ts';

const SCRIPT = fileURLToPath(new URL('../../examples/first-network.sh', import.meta.url));
const ENTITY_LINE = /^([\w-]+ [\w-]+): (\S+) \((created|found)\)$/;

interface Run {
  readonly stdout: string;
  readonly stderr: string;
  /** `<collection> <name>` → id, from the lines the script prints per entity. */
  readonly ids: Map<string, string>;
  readonly outcomes: Set<string>;
}

describe('examples/first-network.sh', () => {
  const controller = useTestController();
  let workDir: string;

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'first-network-example-'));
  });
  afterAll(async () => {
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  async function run(shell: 'dash' | 'bash', env: Record<string, string> = {}): Promise<Run> {
    const { stdout, stderr } = await promisify(execFile)(shell, [SCRIPT], {
      cwd: workDir,
      env: {
        ...process.env,
        // `node` in the script is whichever Node the reader has; here, the one running the tests.
        PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
        ZITI_CTRL: controller().origin,
        ZITI_PASSWORD: ADMIN_PASSWORD,
        ...env,
      },
    });
    const entities = stdout.split('\n').flatMap((line) => {
      const match = ENTITY_LINE.exec(line);
      return match ? [match] : [];
    });
    return {
      stdout,
      stderr,
      ids: new Map(entities.map((match) => [match[1]!, match[2]!])),
      outcomes: new Set(entities.map((match) => match[3]!)),
    };
  }

  /** Every file the runs left in the working directory, with its size. */
  async function filesLeft(): Promise<Record<string, number>> {
    const names = await readdir(workDir);
    const sizes = await Promise.all(names.map(async (name) => [name, (await stat(join(workDir, name))).size]));
    return Object.fromEntries(sizes);
  }

  it('runs twice (dash, then bash), the second run finding every entity the first made', {
    timeout: 180_000,
  }, async () => {
    const first = await run('dash');
    // Two identities, the config, the service, two service policies, two router policies.
    expect(first.ids.size).toBe(8);
    expect([...first.outcomes]).toEqual(['created']);
    expect(first.stdout).toContain('laptop may dial: web\n');
    expect(first.stdout).toContain('web-server may bind: web\n');
    expect(first.stdout).toContain('laptop sees: web, permissions ["Dial"]\n');
    // The traffic needs `ziti` and a router, which the test machines have not (it was run by hand, docs/routers.md).
    expect(first.stdout).toContain('traffic: skipped: no `ziti` on PATH');
    const jwt = await readFile(join(workDir, 'web-server.jwt'), 'utf8');
    expect(JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString())).toMatchObject({
      em: 'ott',
      iss: controller().origin,
    });
    const certificate = await readFile(join(workDir, 'laptop.pem'), 'utf8');

    // The second time through bash, checking the controller's certificate against the network's root CA.
    await writeFile(join(workDir, 'ca.pem'), controller().rootCertPem);
    const second = await run('bash', { ZITI_CACERT: join(workDir, 'ca.pem') });

    expect(second.ids).toEqual(first.ids);
    expect([...second.outcomes]).toEqual(['found']);
    expect(second.stdout).toContain('laptop: enrolled before (its one-time token is used)');
    expect(second.stdout).toContain('laptop sees: web, permissions ["Dial"]\n');
    // The laptop kept the certificate of its one enrollment.
    expect(await readFile(join(workDir, 'laptop.pem'), 'utf8')).toBe(certificate);
    expect(await readFile(join(workDir, 'web-server.jwt'), 'utf8')).toBe(jwt);
    const files = await filesLeft();
    expect(Object.keys(files).sort()).toEqual(['ca.pem', 'laptop.key', 'laptop.pem', 'web-server.jwt']);
    for (const [name, size] of Object.entries(files)) expect(size, name).toBeGreaterThan(0);
  });

  it('re-enrolls the laptop when its certificate is no longer here', { timeout: 180_000 }, async () => {
    await run('dash');
    const certificate = await readFile(join(workDir, 'laptop.pem'), 'utf8');
    await rm(join(workDir, 'laptop.pem'));

    const again = await run('dash');

    expect(again.stdout).toContain('laptop.pem or laptop.key is missing here: re-enrolling laptop');
    expect(again.stdout).toContain('laptop sees: web, permissions ["Dial"]\n');
    const renewed = await readFile(join(workDir, 'laptop.pem'), 'utf8');
    expect(renewed).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(renewed).not.toBe(certificate);
  });

  it('stops at an error with its code and message, and writes no file', { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'first-network-example-failing-'));
    try {
      const failing = promisify(execFile)('sh', [SCRIPT], {
        cwd: dir,
        env: {
          ...process.env,
          PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
          ZITI_CTRL: controller().origin,
          ZITI_PASSWORD: `${ADMIN_PASSWORD}-wrong`,
        },
      });
      await expect(failing).rejects.toMatchObject({
        stderr: expect.stringMatching(/^first-network: logging in as admin: INVALID_AUTH: /m),
      });
      expect(await readdir(dir)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
