/** Deploy-time settings of the controller stack. */
export interface ControllerSettings {
  /** Name of the default admin identity the bootstrap creates on first deploy. */
  readonly adminUsername: string;
  /** API sessions end after this long without a request (the reference's `edge.api.sessionTimeout`). */
  readonly apiSessionTimeoutMinutes: number;
}

/** Reads one CDK context value (`cdk.json` or `cdk synth -c key=value`). */
export type ContextLookup = (key: string) => unknown;

const DEFAULTS: ControllerSettings = { adminUsername: 'admin', apiSessionTimeoutMinutes: 30 };

function firstDefined(context: ContextLookup, key: string, envValue: string | undefined): unknown {
  const fromContext = context(key);
  if (fromContext !== undefined && fromContext !== '') return fromContext;
  return envValue === '' ? undefined : envValue;
}

/**
 * Resolves the settings from CDK context first, then the environment (`ZITI_ADMIN_USERNAME`,
 * `ZITI_API_SESSION_TIMEOUT_MINUTES`), then the defaults. Invalid values fail the synth rather than the deploy.
 */
export function resolveControllerSettings(
  context: ContextLookup,
  env: NodeJS.ProcessEnv = process.env,
): ControllerSettings {
  const adminUsername = firstDefined(context, 'adminUsername', env.ZITI_ADMIN_USERNAME) ?? DEFAULTS.adminUsername;
  if (typeof adminUsername !== 'string' || adminUsername.trim() === '') {
    throw new Error(`adminUsername must be a non-empty string, got ${JSON.stringify(adminUsername)}`);
  }

  // `-c key=value` always yields a string, `cdk.json` may hold a number.
  const timeout = firstDefined(context, 'apiSessionTimeoutMinutes', env.ZITI_API_SESSION_TIMEOUT_MINUTES);
  const apiSessionTimeoutMinutes = timeout === undefined ? DEFAULTS.apiSessionTimeoutMinutes : Number(timeout);
  if (!Number.isInteger(apiSessionTimeoutMinutes) || apiSessionTimeoutMinutes < 1) {
    throw new Error(`apiSessionTimeoutMinutes must be an integer >= 1, got ${JSON.stringify(timeout)}`);
  }

  return { adminUsername, apiSessionTimeoutMinutes };
}
