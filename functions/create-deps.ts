import { removeEndedSessionsOnCommit } from '#shared/auth/api-session-store.ts';
import { type ControllerConfig, loadConfig } from '#shared/config.ts';
import { depsFromConfig } from '#shared/deps-from-config.ts';
import type { Deps } from '#shared/ports/deps.ts';

/**
 * The composition root: the adapters the configuration names (AWS ones in Lambda, local ones for `npm start` and the
 * tests) wired into one `Deps` (`depsFromConfig`, which the routers' endpoint builds its own from too).
 */
export function createDeps(config: ControllerConfig = loadConfig()): Deps {
  return depsFromConfig(config);
}

let cached: Deps | undefined;

/** The cold-start singleton; built on first use, never at import time. */
export function defaultDeps(): Deps {
  cached ??= createDeps();
  return cached;
}

/**
 * The deps of the functions whose changes end sessions (identities, authentication, pki, routers): the first of the
 * sessions a change ends leave the table right after it commits (`removeEndedSessionsOnCommit`).
 */
export function sessionEndingDeps(): Deps {
  return removeEndedSessionsOnCommit(defaultDeps());
}
