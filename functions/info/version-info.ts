import type { Deps } from '#shared/ports/deps.ts';
import { API_BASE_PATHS } from '#shared/routes/route.ts';

/**
 * Capabilities this controller knows (`GET /enumerated-capabilities`). `HA_CONTROLLER` is listed because what it
 * stands for is served (`GET /controllers`), but `/version` does not claim it: the reference claims it only when it
 * runs as a raft cluster, and this deployment is one controller. `OIDC_AUTH`, the OIDC provider at `/oidc`, is claimed
 * only when the configuration says so (`oidc.advertise`): SDKs that see it switch to the OIDC flow by themselves.
 */
export const ENUMERATED_CAPABILITIES = ['HA_CONTROLLER', 'OIDC_AUTH'] as const;

function binding(baseUrl: string, path: string) {
  return { v1: { path, apiBaseUrls: [`${baseUrl}${path}`] } };
}

/**
 * Whether SDKs reaching `baseUrl` are offered the OIDC provider: when the configuration advertises it and the address
 * is a host's root (a custom domain, the local server). The C SDK posts its logins to the absolute `/oidc/login/*`,
 * which an API Gateway stage URL (`…/prod`) would not route (`docs/oidc-design.md`, E.1).
 */
function offersOidc(deps: Deps, baseUrl: string): boolean {
  return deps.config.oidc.advertise && new URL(baseUrl).pathname.replace(/\/$/, '') === '';
}

/** The version document of `GET /version` and `GET /`: only the APIs this controller really hosts are listed. */
export function versionInfo(deps: Deps, baseUrl: string) {
  const oidc = offersOidc(deps, baseUrl);
  return {
    version: deps.config.version,
    revision: deps.config.revision,
    buildDate: deps.config.buildDate,
    runtimeVersion: process.version,
    // A serverless controller is not a raft cluster, so it never claims HA_CONTROLLER (which implies one).
    capabilities: oidc ? ['OIDC_AUTH'] : [],
    apiVersions: {
      // `edge` is the legacy name of the client API; the reference always lists it as a copy.
      edge: binding(baseUrl, API_BASE_PATHS.client),
      'edge-client': binding(baseUrl, API_BASE_PATHS.client),
      'edge-management': binding(baseUrl, API_BASE_PATHS.management),
      fabric: binding(baseUrl, API_BASE_PATHS.fabric),
      ...(oidc ? { 'edge-oidc': binding(baseUrl, API_BASE_PATHS.oidc) } : {}),
    },
  };
}
