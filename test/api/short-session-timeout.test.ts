import { describe, expect, it } from 'vitest';
import { useAdminController } from '../support/admin-controller.ts';

/**
 * With the shortest timeout the configuration takes (one minute), a session in use is refreshed often enough to stay
 * alive: the touch interval is never more than half the timeout.
 */
const { controller, userUnder } = useAdminController({ apiSessionTimeoutMinutes: 1 });
const C = '/edge/client/v1';

describe('a one-minute API session timeout', () => {
  it('keeps a session used every 40 seconds alive, and ends it a minute after its last use', async () => {
    const user = await userUnder('default', 'short-timeout');
    const login = await controller().call('POST', `${C}/authenticate?method=password`, {
      body: { username: user.username, password: user.password },
    });
    expect(login.status).toBe(200);
    const token = login.body.data.token as string;
    for (let use = 0; use < 4; use++) {
      controller().advanceClock(40_000);
      const response = await controller().call('GET', `${C}/current-api-session`, { token });
      expect(response.status, `use ${use + 1}`).toBe(200);
    }
    controller().advanceClock(61_000);
    expect((await controller().call('GET', `${C}/current-api-session`, { token })).status).toBe(401);
  });
});
