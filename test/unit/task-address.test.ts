import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { taskAddress } from '#ctrl-channel/task-address.ts';

describe("the endpoint task's address for the relay", () => {
  it('is CTRL_RELAY_HOST when set, else none without the ECS metadata endpoint', async () => {
    expect(await taskAddress({ CTRL_RELAY_HOST: '10.1.2.3' })).toBe('10.1.2.3');
    expect(await taskAddress({})).toBeUndefined();
  });

  it("is the container's private IPv4 from the ECS task metadata endpoint v4", async () => {
    const server = createServer((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ Networks: [{ NetworkMode: 'awsvpc', IPv4Addresses: ['10.0.3.17'] }] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      expect(await taskAddress({ ECS_CONTAINER_METADATA_URI_V4: `http://127.0.0.1:${port}/v4/abc` })).toBe('10.0.3.17');
    } finally {
      server.close();
    }
  });
});
