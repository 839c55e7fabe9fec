import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { GROUP_OPERATIONS } from '#local/group-operations.ts';
import { buildOpenApi, type OpenApiDocument } from '#shared/openapi/build-openapi.ts';
import type { DocumentedApi as Api } from '#shared/routes/route.ts';
import { ROUTES } from '#shared/routes/route-table.ts';

/**
 * `npm run openapi`: writes our OpenAPI documents (the edge client and management APIs, the fabric API) to
 * `shared/openapi/generated/<api>.json`.
 *
 * Why generated ahead and committed rather than built when served: the request schemas live in every group's
 * operations, and reaching them at run time would pull every group's code into the `info` function that serves
 * `/specs`. The info function imports the edge APIs' JSON files instead, and `test/unit/openapi.test.ts` fails when they
 * are not what this script writes from the current route table and operations (run it again after changing routes
 * or request schemas). Tools (code generators, API explorers) read the same files. They are formatted by biome like
 * every file of the repository, so the test compares their content, not their text.
 */
export const OPENAPI_FILES: Readonly<Record<Api, URL>> = {
  client: new URL('../shared/openapi/generated/client.json', import.meta.url),
  management: new URL('../shared/openapi/generated/management.json', import.meta.url),
  fabric: new URL('../shared/openapi/generated/fabric.json', import.meta.url),
};

/** Every API, in the order the documents are written. */
export const APIS: readonly Api[] = ['client', 'management', 'fabric'];

/** Every document, from the route table and what each group's operations say about themselves. */
export async function generateOpenApiDocuments(): Promise<Record<Api, OpenApiDocument>> {
  const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  // Operations loaded on first use carry their docs in their module: load those first.
  const operations = new Map(
    await Promise.all(
      ROUTES.map(async (route) => {
        const operation = GROUP_OPERATIONS[route.group][route.operation];
        return [route, (await operation?.load?.()) ?? operation] as const;
      }),
    ),
  );
  const docsOf = (route: (typeof ROUTES)[number]) => operations.get(route)?.docs;
  return {
    client: buildOpenApi('client', ROUTES, docsOf, pkg.version),
    management: buildOpenApi('management', ROUTES, docsOf, pkg.version),
    fabric: buildOpenApi('fabric', ROUTES, docsOf, pkg.version),
  };
}

if (import.meta.main) {
  const documents = await generateOpenApiDocuments();
  const files = APIS.map((api) => fileURLToPath(OPENAPI_FILES[api]));
  for (const [index, api] of APIS.entries()) {
    await writeFile(files[index]!, `${JSON.stringify(documents[api], null, 2)}\n`);
  }
  const biome = fileURLToPath(new URL('../node_modules/@biomejs/biome/bin/biome', import.meta.url));
  await promisify(execFile)(process.execPath, [biome, 'format', '--write', ...files]);
  process.stdout.write(`wrote ${files.join(', ')}\n`);
}
