/**
 * Where the other endpoint tasks reach this one (its relay, `endpoint-relay.ts`): `CTRL_RELAY_HOST` when set (a
 * process run by hand), else the task's private IPv4 from the ECS task metadata endpoint v4 (which ECS gives every
 * Fargate container at `ECS_CONTAINER_METADATA_URI_V4`); undefined when neither says (the relay then stays off).
 */
export async function taskAddress(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  if (env.CTRL_RELAY_HOST) return env.CTRL_RELAY_HOST;
  const metadata = env.ECS_CONTAINER_METADATA_URI_V4;
  if (!metadata) return undefined;
  const answer = await fetch(metadata, { signal: AbortSignal.timeout(5_000) });
  if (!answer.ok) throw new Error(`the task metadata endpoint answered ${answer.status}`);
  const container = (await answer.json()) as { Networks?: { IPv4Addresses?: string[] }[] };
  return container.Networks?.flatMap((network) => network.IPv4Addresses ?? [])[0];
}
