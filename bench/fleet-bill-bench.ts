import { firstCertificateOf } from '#shared/pki/certificates.ts';
import { DEFAULT_REQUEST_LOG_SAMPLE_RATE } from '../cdk/controller-settings.ts';
import type { SessionBenchOptions } from './api-session-bench.ts';
import { createBenchClient } from './bench-client.ts';
import { startBenchController } from './bench-controller.ts';
import { type FleetRequest, loggedBytesPerRequest, OIDC_CERT_LOGIN_REQUESTS } from './fleet-bill.ts';
import { BASE, expectStatus, login } from './identity-scenarios.ts';
import { measureOperation, type OperationFigures } from './measure-operation.ts';
import { bearer, cSdkCertLogin, cSdkRefresh, type OidcTokens } from './oidc-flows.ts';
import { csr } from './pki-bench.ts';

const CLIENT = '/edge/client/v1';

/** One measured kind of fleet request (`authenticated`: a refresh with no touch due, for the goal only). */
export interface FleetRow {
  readonly request: FleetRequest | 'authenticated';
  /** What one run measured: one request, or a flow of `requestsPerRun` (an OIDC login's four). */
  readonly figures: OperationFigures;
  /** The bytes a run's lines cost on AWS, sampling applied (`loggedBytesPerRequest`). */
  readonly logBytes: number;
  /** The requests a run sends, each an invocation: 1 but for a flow. */
  readonly requestsPerRun: number;
}

/** A minute and a second: a session refresh that comes every 20 minutes always finds its touch due. */
const PAST_TOUCH_MS = 61_000;

/**
 * Unmeasured runs of each request before its measured ones, at least: a fleet's function instance answers thousands
 * of requests between cold starts, and V8 optimises a request's code over its first few hundred runs (a poll's CPU
 * here falls from about 6 ms over its first 200 runs to about 3.5 ms, then stays).
 */
const WARM_UP_RUNS = 300;

/**
 * A refresh of its access token, every 20 minutes on average, finds the session's touch due too: the clock moved as
 * for the legacy refresh.
 */
const OIDC_REFRESH_CLOCK_MS = PAST_TOUCH_MS;

/** The runs whose log lines are weighed, every line written (`loggedBytesPerRequest` applies the stack's sampling). */
const LOGGED_RUNS = 20;

/**
 * The requests of an enrolled device, measured on a table of its own: a device identity with one role attribute,
 * enrolled by ott and logged in with its certificate, one service it may dial through a Dial policy and an edge
 * router both policies reach. Each request as the C SDK sends it: the poll (nothing moves the clock: within a
 * session's life it neither writes nor needs to), the session refresh with the clock moved past the touch interval
 * before each (as 20 minutes apart), a certificate login, the service list, and a fresh Dial (the previous session
 * deleted before each, uncounted); then the same device under OIDC, as the C SDK's internal OIDC client sends it
 * (`oidc-flows.ts`): its certificate login, the four requests of the code flow measured as one run, the poll, the
 * service list and a fresh Dial with its access token as a bearer, and the token's refresh (each spending the refresh
 * token the one before left, the clock moved past the touch interval before each, the newest access token used
 * after). The lines the handlers print while a request runs are what it logs (what the
 * preparing requests print is not), taken from a few runs with every line written; the measured runs then log as the
 * stack does (`DEFAULT_REQUEST_LOG_SAMPLE_RATE`), so their CPU leaves out the summary lines a deployed function does not
 * write.
 */
export async function fleetBillBench(options: SessionBenchOptions): Promise<FleetRow[]> {
  let logged: string[] | undefined;
  const bench = await startBenchController('bench-bill', options, undefined, (line) => logged?.push(line));
  const { client, meter, origin } = bench;
  const admin = await login(client, options.adminUsername, options.adminPassword);
  const create = async (path: string, body: unknown) =>
    (
      expectStatus(await client.call('POST', `${BASE}${path}`, { token: admin, body }), 201, `create ${path}`).body as {
        data: { id: string };
      }
    ).data.id;
  try {
    const deviceId = await create('/identities', {
      name: 'bill-device',
      type: 'Device',
      isAdmin: false,
      roleAttributes: ['fleet'],
      enrollment: { ott: true },
    });
    const serviceId = await create('/services', { name: 'bill-service', roleAttributes: ['fleet-service'] });
    await create('/service-policies', {
      name: 'bill-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#fleet'],
      serviceRoles: ['#fleet-service'],
    });
    await create('/edge-routers', { name: 'bill-router', roleAttributes: ['fleet-edge'] });
    await create('/edge-router-policies', {
      name: 'bill-erp',
      semantic: 'AnyOf',
      identityRoles: ['#fleet'],
      edgeRouterRoles: ['#fleet-edge'],
    });
    await create('/service-edge-router-policies', {
      name: 'bill-serp',
      semantic: 'AnyOf',
      serviceRoles: ['#fleet-service'],
      edgeRouterRoles: ['#fleet-edge'],
    });
    const detail = await client.call('GET', `${BASE}/identities/${deviceId}`, { token: admin });
    const ott = (detail.body as { data: { enrollment: { ott: { token: string } } } }).data.enrollment.ott.token;
    const request = await csr('bill-device');
    const enrolled = await client.call('POST', `${CLIENT}/enroll/ott`, {
      body: { token: ott, clientCsr: request.csr },
    });
    const issued = (expectStatus(enrolled, 200, 'enroll').body as { data: { cert: string } }).data.cert;
    const leaf = firstCertificateOf(issued)!.toString();
    const device = createBenchClient(origin, options.tls.cert, { key: request.key, cert: leaf });
    try {
      const certLogin = async () =>
        (
          expectStatus(await device.call('POST', `${CLIENT}/authenticate?method=cert`, { body: {} }), 200, 'cert login')
            .body as { data: { token: string } }
        ).data.token;
      const token = await certLogin();
      let sessionId = '';
      const dial = async () => {
        const created = await device.call('POST', `${CLIENT}/sessions`, { token, body: { serviceId, type: 'Dial' } });
        sessionId = (expectStatus(created, 201, 'dial').body as { data: { id: string } }).data.id;
      };
      const current = async () => {
        expectStatus(await device.call('GET', `${CLIENT}/current-api-session`, { token }), 200, 'current session');
      };
      // The OIDC session's tokens: the login's first, then each refresh's (a refresh token is good once).
      let oidc: OidcTokens | undefined;
      const access = () => {
        if (!oidc) throw new Error('no OIDC login yet');
        return bearer(oidc.accessToken);
      };
      let oidcSessionId = '';
      const measured: [FleetRow['request'], () => Promise<void>, (() => Promise<void>)?][] = [
        [
          'poll',
          async () => {
            expectStatus(
              await device.call('GET', `${CLIENT}/current-api-session/service-updates`, { token }),
              200,
              'poll',
            );
          },
        ],
        ['authenticated', current],
        ['refresh', current, async () => bench.advanceClock(PAST_TOUCH_MS)],
        [
          'login',
          async () => {
            await certLogin();
          },
        ],
        [
          'serviceList',
          async () => {
            expectStatus(await device.call('GET', `${CLIENT}/services`, { token }), 200, 'service list');
          },
        ],
        [
          'dial',
          dial,
          async () => {
            if (sessionId) await device.call('DELETE', `${CLIENT}/sessions/${sessionId}`, { token });
          },
        ],
        [
          'oidcLogin',
          async () => {
            oidc = await cSdkCertLogin(device);
          },
        ],
        [
          'oidcPoll',
          async () => {
            const headers = access();
            expectStatus(
              await device.call('GET', `${CLIENT}/current-api-session/service-updates`, { headers }),
              200,
              'OIDC poll',
            );
          },
        ],
        [
          'oidcServiceList',
          async () => {
            expectStatus(await device.call('GET', `${CLIENT}/services`, { headers: access() }), 200, 'OIDC services');
          },
        ],
        [
          'oidcDial',
          async () => {
            const body = { serviceId, type: 'Dial' };
            const created = await device.call('POST', `${CLIENT}/sessions`, { headers: access(), body });
            oidcSessionId = (expectStatus(created, 201, 'OIDC dial').body as { data: { id: string } }).data.id;
          },
          async () => {
            if (oidcSessionId)
              await device.call('DELETE', `${CLIENT}/sessions/${oidcSessionId}`, { headers: access() });
          },
        ],
        [
          'oidcRefresh',
          async () => {
            if (!oidc) throw new Error('no OIDC login yet');
            oidc = await cSdkRefresh(device, oidc.refreshToken);
          },
          async () => bench.advanceClock(OIDC_REFRESH_CLOCK_MS),
        ],
      ];
      const rows: FleetRow[] = [];
      const measure = { ...options.measure, warmUp: Math.max(options.measure.warmUp, WARM_UP_RUNS) };
      for (const [kind, run, prepare] of measured) {
        options.progress(kind);
        const lines: string[] = [];
        bench.sampleRequestLogs(1);
        for (let i = 0; i < LOGGED_RUNS; i++) {
          if (prepare) await meter.uncounted(prepare);
          logged = lines;
          try {
            await run();
          } finally {
            logged = undefined;
          }
        }
        bench.sampleRequestLogs(DEFAULT_REQUEST_LOG_SAMPLE_RATE);
        const figures = await measureOperation(run, meter, measure, prepare);
        const requestsPerRun = kind === 'oidcLogin' ? OIDC_CERT_LOGIN_REQUESTS : 1;
        if (figures.invocationsPerOp !== requestsPerRun) {
          throw new Error(`${kind}: ${figures.invocationsPerOp} requests a run, expected ${requestsPerRun}`);
        }
        rows.push({ request: kind, figures, logBytes: loggedBytesPerRequest(lines, LOGGED_RUNS), requestsPerRun });
      }
      return rows;
    } finally {
      device.close();
    }
  } finally {
    await bench.close();
  }
}
