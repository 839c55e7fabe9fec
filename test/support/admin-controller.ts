import type { ControllerConfig } from '#shared/config.ts';
import { managementFixtures } from './management-fixtures.ts';
import { type ControllerSetup, useTestController } from './use-controller.ts';

/**
 * One controller for the whole test file, started in `beforeAll` with the admin logged in and closed in `afterAll`.
 * `controller` and `admin` are getters: both exist only once setup has run. `relogin` replaces the admin's session
 * (after the clock has been moved past its expiry).
 */
export function useAdminController(overrides: Partial<ControllerConfig> = {}, setup: ControllerSetup = {}) {
  let token: string | undefined;
  const controller = useTestController(overrides, setup, async (started) => {
    token = await started.login();
  });

  const admin = (): string => {
    if (token === undefined) throw new Error('the admin token is used before beforeAll logged in');
    return token;
  };
  const relogin = async (): Promise<string> => {
    token = await controller().login();
    return token;
  };

  return { controller, admin, relogin, ...managementFixtures(controller, admin) };
}
