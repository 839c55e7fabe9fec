import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD } from '../support/test-controller.ts';
import { useTestController } from '../support/use-controller.ts';

const README = new URL('../../README.md', import.meta.url);
const SECTION = '## Your first network';

/**
 * The shell of the README's first-network walkthrough, as a reader pastes it, pointed at this controller. The
 * `ziti edge enroll` lines and the traffic's block (`ziti tunnel`, and the router `npm start -- --router` runs) are
 * left out: the CLI is not on the machines the tests run on (the walkthrough gives the same enrollment by CSR, which
 * runs here; the traffic was run by hand against the reference binary, docs/routers.md).
 */
async function walkthrough(origin: string): Promise<{ script: string; setUp: string; expected: string[] }> {
  const readme = await readFile(README, 'utf8');
  const start = readme.indexOf(SECTION);
  const section = readme.slice(start, readme.indexOf('\n## ', start + SECTION.length));
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)]
    .filter((block) => !block[1]!.includes('ziti tunnel'))
    .map((block) =>
      block[1]!
        .split('\n')
        .filter((line) => !line.startsWith('ziti '))
        .join('\n')
        .replaceAll('https://localhost:1280', origin)
        .replaceAll('<password>', ADMIN_PASSWORD),
    );
  // What the README says the checks print: `# [ … ]`, after a command or on a line of its own.
  const expected = blocks.flatMap((block) => [...block.matchAll(/# (\[.*\])\s*$/gm)].map((match) => match[1]!));
  // The first block: the management URL, `field`, the admin's session and `api`.
  return { script: blocks.join('\n'), setUp: blocks[0]!, expected };
}

/** `node` in the walkthrough is whichever Node the reader has; here, the one running the tests. */
const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` };

describe('the README first-network walkthrough', () => {
  const controller = useTestController();
  let workDir: string;

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'readme-walkthrough-'));
  });
  afterAll(async () => {
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('runs as written in sh and prints what the README says it prints', { timeout: 180_000 }, async () => {
    const { script, expected } = await walkthrough(controller().origin);

    const { stdout } = await promisify(execFile)('sh', ['-e', '-c', script], { cwd: workDir, env });

    const printed = stdout.split('\n').filter(Boolean);
    expect(expected).toEqual(["[ 'web' ]", "[ 'web' ]", "[ [ 'web', [ 'Dial' ] ] ]"]);
    expect(printed.filter((line) => line.startsWith('['))).toEqual(expected);
    // The five creates print an id each.
    expect(printed.filter((line) => !line.startsWith('['))).toHaveLength(5);
    for (const name of ['laptop', 'web-server']) {
      const jwt = await readFile(join(workDir, `${name}.jwt`), 'utf8');
      expect(jwt, `${name}.jwt`).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      const claims = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());
      expect(claims).toMatchObject({ em: 'ott', iss: controller().origin });
    }
  });

  it('says the controller is not there when nothing answers, rather than a JSON parse error', async () => {
    const { setUp } = await walkthrough('https://127.0.0.1:9');

    const unanswered = promisify(execFile)('sh', ['-e', '-c', setUp], { cwd: workDir, env });

    await expect(unanswered).rejects.toMatchObject({
      stderr: expect.stringMatching(/^no answer: is the controller running \(npm start\)\?\n$/),
    });
  });

  it("prints an error's cause: a name created twice is refused as a duplicate value", async () => {
    const { setUp } = await walkthrough(controller().origin);
    const create = `api -X POST "$MGMT/identities" -d '{"name":"twice","type":"Default","isAdmin":false}' | field data.id`;

    const twice = promisify(execFile)('sh', ['-e', '-c', [setUp, create, create].join('\n')], { cwd: workDir, env });

    await expect(twice).rejects.toMatchObject({
      stdout: expect.stringMatching(/^\S+\n$/),
      stderr: expect.stringContaining(
        'COULD_NOT_VALIDATE The request is invalid; see cause for the field at fault. ' +
          'cause: {"field":"name","reason":"duplicate value \'twice\'',
      ),
    });
  });
});
