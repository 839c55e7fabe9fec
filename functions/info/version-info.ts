import type { Deps } from '#shared/ports/deps.ts';
import { API_BASE_PATHS } from '#shared/routes/route.ts';

/**
 * Capabilities this controller knows (`GET /enumerated-capabilities`). `HA_CONTROLLER` is listed because what it
 * stands for is served (`GET /controllers`), but `/version` does not claim it: the reference claims it only when it
 * runs as a raft cluster, and this deployment is one controller. `OIDC_AUTH` is deliberately absent: SDKs that see it
 * switch to the OIDC flow, and this controller serves the `zt-session` flow only.
 */
export const ENUMERATED_CAPABILITIES = ['HA_CONTROLLER'] as const;

function binding(baseUrl: string, path: string) {
  return { v1: { path, apiBaseUrls: [`${baseUrl}${path}`] } };
}

/** The version document of `GET /version` and `GET /`: only the APIs this controller really hosts are listed. */
export function versionInfo(deps: Deps, baseUrl: string) {
  return {
    version: deps.config.version,
    revision: deps.config.revision,
    buildDate: deps.config.buildDate,
    runtimeVersion: process.version,
    // A serverless controller is not a raft cluster, so it advertises no capability (HA_CONTROLLER implies one).
    capabilities: [],
    apiVersions: {
      // `edge` is the legacy name of the client API; the reference always lists it as a copy.
      edge: binding(baseUrl, API_BASE_PATHS.client),
      'edge-client': binding(baseUrl, API_BASE_PATHS.client),
      'edge-management': binding(baseUrl, API_BASE_PATHS.management),
      fabric: binding(baseUrl, API_BASE_PATHS.fabric),
    },
  };
}
