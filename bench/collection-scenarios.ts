import { BASE, expectStatus, listScenario, type Scenario, type ScenarioContext } from './identity-scenarios.ts';
import type { SeededCollection } from './seed-entities.ts';

/**
 * Create and list of a seeded collection at one table size: `POST`, an unfiltered `GET`, and a `GET` whose filter
 * (`name contains`) pins nothing. The create adds an entity per run (unique names per size).
 */
export function collectionScenarios<C extends object>(
  context: Pick<ScenarioContext, 'client' | 'token' | 'size'>,
  collection: SeededCollection<C>,
  sampleIndex: number,
): Scenario[] {
  const nameNeedle = collection.seededName(sampleIndex).slice(-6);
  let created = 0;
  return [
    {
      label: `create (\`POST ${collection.path}\`)`,
      writes: true,
      run: async () => {
        created++;
        const name = `bench-created-${context.size}-${String(created).padStart(5, '0')}`;
        const body = { ...collection.seededInput(created), name };
        const response = await context.client.call('POST', `${BASE}${collection.path}`, {
          body,
          token: context.token,
        });
        expectStatus(response, 201, `create ${collection.path}`);
      },
    },
    listScenario(context, 'list, no filter', {}, collection.path),
    listScenario(
      context,
      `list, filter \`name contains "${nameNeedle}"\``,
      { filter: `name contains "${nameNeedle}"` },
      collection.path,
    ),
  ];
}
