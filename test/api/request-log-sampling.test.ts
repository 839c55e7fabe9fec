import { describe, expect, it } from 'vitest';
import { useAdminController } from '../support/admin-controller.ts';
import { oidcPasswordTokens, refreshGrant } from '../support/oidc-client.ts';
import { useTestController } from '../support/use-controller.ts';

type Line = Record<string, unknown>;

/** The summary lines the controller wrote from line `from` on. */
function requestLines(logLines: readonly string[], from: number): Line[] {
  return logLines
    .slice(from)
    .map((line) => JSON.parse(line) as Line)
    .filter((line) => line.message === 'request');
}

const READS = 120;

describe('request summary lines, one successful read in four sampled', () => {
  const controller = useTestController({ requestLog: { sampleRate: 4, slowMs: 60_000 } });

  it('writes about a quarter of the successful reads, saying the rate, and every failed read and write', async () => {
    const from = controller().logLines.length;
    for (let i = 0; i < READS; i++)
      expect((await controller().call('GET', '/edge/client/v1/version')).status).toBe(200);
    for (let i = 0; i < 20; i++) {
      expect((await controller().call('GET', '/edge/management/v1/identities')).status).toBe(401);
    }
    await controller().login();

    const lines = requestLines(controller().logLines, from);
    const sampled = lines.filter((line) => line.resource === '/edge/client/v1/version');
    // Binomial(120, 1/4): mean 30, standard deviation 4.7; these bounds are over four deviations out.
    expect(sampled.length).toBeGreaterThanOrEqual(10);
    expect(sampled.length).toBeLessThanOrEqual(55);
    for (const line of sampled) expect(line).toMatchObject({ method: 'GET', status: 200, sampleRate: 4 });
    const refused = lines.filter((line) => line.status === 401);
    expect(refused).toHaveLength(20);
    for (const line of refused) {
      expect(line).toMatchObject({ method: 'GET', resource: '/edge/management/v1/identities', code: 'UNAUTHORIZED' });
      expect(line).not.toHaveProperty('sampleRate');
    }
    const logins = lines.filter((line) => line.resource === '/edge/management/v1/authenticate');
    expect(logins).toEqual([expect.objectContaining({ method: 'POST', status: 200 })]);
    expect(logins[0]).not.toHaveProperty('sampleRate');
  });
});

describe('request summary lines of slow requests', () => {
  // Every request counts as slow, and a successful read would otherwise be written one time in a million.
  const controller = useTestController({ requestLog: { sampleRate: 1_000_000, slowMs: 0 } });

  it('writes every slow successful read, marked slow, whatever the sampling', async () => {
    const from = controller().logLines.length;
    for (let i = 0; i < 20; i++) expect((await controller().call('GET', '/edge/client/v1/version')).status).toBe(200);

    const lines = requestLines(controller().logLines, from);
    expect(lines).toHaveLength(20);
    for (const line of lines) {
      expect(line).toMatchObject({ method: 'GET', status: 200, slow: true });
      expect(line).not.toHaveProperty('sampleRate');
    }
  });
});

describe("request summary lines of an OIDC token refresh, a device's routine write", () => {
  // A successful read (or routine write) is written one time in a million: in effect never.
  const admin = useAdminController({ requestLog: { sampleRate: 1_000_000, slowMs: 60_000 } });
  const { userUnder } = admin;

  it('samples successful refreshes as reads, and writes every refused one and every code exchange', async () => {
    const user = await userUnder('default', 'sampled-refresh-user');
    const from = admin.controller().logLines.length;
    let tokens = await oidcPasswordTokens(admin.controller(), user.username, user.password);
    for (let i = 0; i < 5; i++) {
      const refreshed = await refreshGrant(admin.controller(), tokens.refreshToken);
      expect(refreshed.status).toBe(200);
      tokens = { ...tokens, refreshToken: refreshed.body.refresh_token };
    }
    const spent = await refreshGrant(admin.controller(), 'not-a-refresh-token');
    expect(spent.status).toBe(400);

    const tokenLines = requestLines(admin.controller().logLines, from).filter(
      (line) => line.resource === '/oidc/oauth/token',
    );
    // The code's exchange and the refused refresh, never the five refreshes.
    expect(tokenLines.map((line) => line.status)).toEqual([200, 400]);
  });
});
