import { describe, expect, it } from 'vitest';
import { ok } from '#shared/http/envelope.ts';
import { documented, loadedOnUse, type OperationRequest } from '#shared/http/operation.ts';
import type { Deps } from '#shared/ports/deps.ts';

const request = {} as OperationRequest;
const deps = {} as Deps;

describe('loadedOnUse', () => {
  it('loads the module with the first request to any of its operations, once, and answers through it', async () => {
    let loads = 0;
    const operations = loadedOnUse(['first', 'second'], async () => {
      loads++;
      return { first: async () => ok('one'), second: async () => ok('two'), NOT_AN_OPERATION: 3 };
    });

    expect(Object.keys(operations)).toEqual(['first', 'second']);
    expect(loads).toBe(0);
    const answers = await Promise.all([operations.first!(request, deps), operations.second!(request, deps)]);
    await operations.first!(request, deps);

    expect(answers.map((answer) => (answer.body as { data: unknown }).data)).toEqual(['one', 'two']);
    expect(loads).toBe(1);
  });

  it("gives the loaded operation's docs through load(), for the API documents", async () => {
    const body = {} as never;
    const operations = loadedOnUse(['create'], async () => ({
      create: documented(async () => ok(null), { body }),
    }));

    expect(operations.create!.docs).toBeUndefined();
    expect((await operations.create!.load!()).docs).toEqual({ body });
  });

  it('tries the import again after it failed, and refuses a name the module lacks', async () => {
    let attempts = 0;
    const operations = loadedOnUse(['flaky', 'missing'], async () => {
      attempts++;
      if (attempts === 1) throw new Error('import failed');
      return { flaky: async () => ok('loaded') };
    });

    await expect(operations.flaky!(request, deps)).rejects.toThrow('import failed');
    expect(((await operations.flaky!(request, deps)).body as { data: unknown }).data).toBe('loaded');
    await expect(operations.missing!(request, deps)).rejects.toThrow('the loaded module has no operation missing');
  });
});
