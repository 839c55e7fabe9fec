import type { ALBEvent, ALBResult } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { GROUP_OPERATIONS } from '#local/group-operations.ts';
import type { FrontDoor } from '#shared/config.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { ALB_RESPONSE_BYTES } from '#shared/http/response-size.ts';
import type { OperationGroup } from '#shared/routes/route.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { enrolledDevice, urlEncodedPem } from '../support/enrolled-device.ts';
import { lambdaContext, proxyEvent } from '../support/lambda-event.ts';

const M = '/edge/management/v1';
const { controller, admin, call, createdId } = useAdminController({ frontDoor: 'alb' });

/** The group's handler as the Lambda runs it, on this controller's table, behind the given front door. */
function handlerOf(group: OperationGroup, frontDoor: FrontDoor = 'alb') {
  const deps = { ...controller().deps, config: { ...controller().deps.config, frontDoor } };
  return createGroupHandler(group, ROUTES, GROUP_OPERATIONS[group], () => deps);
}

interface AlbRequest {
  readonly query?: Record<string, string[]>;
  readonly headers?: Record<string, string[]>;
  readonly body?: string;
  readonly isBase64Encoded?: boolean;
  /** The target group without `lambda.multi_value_headers.enabled`: single values. */
  readonly singleValue?: boolean;
}

/** A target event as the load balancer sends it, multi-value headers on unless told otherwise. */
function albEvent(method: string, path: string, request: AlbRequest = {}): ALBEvent {
  const headers = {
    host: ['controller.example.com'],
    'x-forwarded-for': ['198.51.100.7'],
    'x-forwarded-proto': ['https'],
    ...request.headers,
  };
  const query = request.query ?? {};
  const common = {
    requestContext: { elb: { targetGroupArn: 'arn:aws:elasticloadbalancing:eu-west-1:1:targetgroup/tg/1' } },
    httpMethod: method,
    path,
    body: request.body ?? '',
    isBase64Encoded: request.isBase64Encoded ?? false,
  };
  return request.singleValue
    ? {
        ...common,
        headers: Object.fromEntries(Object.entries(headers).map(([name, values]) => [name, values.at(-1)!])),
        queryStringParameters: Object.fromEntries(
          Object.entries(query).map(([name, values]) => [name, values.at(-1)!]),
        ),
      }
    : { ...common, multiValueHeaders: headers, multiValueQueryStringParameters: query };
}

const json = { 'content-type': ['application/json'] };
const bodyOf = (result: ALBResult) => JSON.parse(result.body ?? '');
const passwordLogin = (request: AlbRequest = {}) =>
  albEvent('POST', `${M}/authenticate`, {
    query: { method: ['password'] },
    headers: json,
    body: JSON.stringify({ username: 'admin', password: 'admin-password-for-tests' }),
    ...request,
  });

describe('an ALB target event', () => {
  it("is answered in the load balancer's shape, with multi-value headers as the request came", async () => {
    const result = await handlerOf('info')(albEvent('GET', '/edge/client/v1/version'), lambdaContext());

    expect(result).toMatchObject({ statusCode: 200, statusDescription: '200 OK', isBase64Encoded: false });
    expect(result.headers).toBeUndefined();
    expect(result.multiValueHeaders?.['content-type']).toEqual(['application/json']);
    expect(bodyOf(result).data.apiVersions['edge-client'].v1.apiBaseUrls).toEqual([
      'https://controller.example.com/edge/client/v1',
    ]);
  });

  it('is answered with single-value headers when the target group sends single values', async () => {
    const result = await handlerOf('info')(
      albEvent('GET', '/edge/client/v1/version', { singleValue: true }),
      lambdaContext(),
    );

    expect(result.statusCode).toBe(200);
    expect(result.multiValueHeaders).toBeUndefined();
    expect(result.headers?.['content-type']).toBe('application/json');
  });

  it('finds its route from the raw path: path parameters, literals, the /edge/v1 alias, 404 and 405', async () => {
    const id = await createdId('/identities', { name: 'alb path one', type: 'User', isAdmin: false });
    const session = { 'zt-session': [admin()] };
    const identities = handlerOf('identities');

    const byId = await identities(albEvent('GET', `${M}/identities/${id}`, { headers: session }), lambdaContext());
    const alias = await handlerOf('info')(albEvent('GET', '/edge/v1/version'), lambdaContext());
    const otherGroup = await handlerOf('info')(
      albEvent('GET', `${M}/identities`, { headers: session }),
      lambdaContext(),
    );
    const wrongMethod = await identities(albEvent('PUT', `${M}/identities`, { headers: session }), lambdaContext());

    expect(byId.statusCode, byId.body).toBe(200);
    expect(bodyOf(byId).data.name).toBe('alb path one');
    expect(alias.statusCode).toBe(200);
    expect([otherGroup.statusCode, bodyOf(otherGroup).error.code]).toEqual([404, 'NOT_FOUND']);
    expect([wrongMethod.statusCode, wrongMethod.statusDescription]).toEqual([405, '405 Method Not Allowed']);
    expect(bodyOf(wrongMethod).error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('has its URL-encoded query values decoded, single- or multi-value', async () => {
    const id = await createdId('/identities', { name: 'alb query "two"', type: 'User', isAdmin: false });
    const filter = encodeURIComponent('name = "alb query \\"two\\""');
    for (const singleValue of [false, true]) {
      const result = await handlerOf('identities')(
        albEvent('GET', `${M}/identities`, {
          query: { filter: [filter] },
          headers: { 'zt-session': [admin()] },
          singleValue,
        }),
        lambdaContext(),
      );

      expect(result.statusCode, result.body).toBe(200);
      expect(bodyOf(result).data.map((identity: { id: string }) => identity.id)).toEqual([id]);
    }
  });

  it("answers a browser's preflight at a path some route serves, and not elsewhere", async () => {
    const preflight = (path: string) =>
      handlerOf('info')(
        albEvent('OPTIONS', path, {
          headers: { origin: ['https://console.example.com'], 'access-control-request-method': ['DELETE'] },
        }),
        lambdaContext(),
      );
    // Routes of another group (identities), as the listener's last rule sends every OPTIONS to the info function.
    const served = await preflight(`${M}/identities/some-id`);
    const unknown = await preflight(`${M}/no-such-things`);

    expect([served.statusCode, served.statusDescription]).toEqual([204, '204 No Content']);
    expect(served.multiValueHeaders?.['access-control-allow-origin']).toEqual(['*']);
    expect(served.multiValueHeaders?.['ziti-instance-id']).toHaveLength(1);
    expect(served.headers).toBeUndefined();
    expect(served.multiValueHeaders?.['access-control-allow-methods']?.[0]).toContain('DELETE');
    expect(served.multiValueHeaders?.['access-control-allow-headers']?.[0]).toContain('zt-session');
    expect(unknown.statusCode).toBe(404);
  });

  it('takes a base64-encoded body', async () => {
    const body = Buffer.from(JSON.stringify({ username: 'admin', password: 'admin-password-for-tests' })).toString(
      'base64',
    );

    const result = await handlerOf('authentication')(passwordLogin({ body, isBase64Encoded: true }), lambdaContext());

    expect(result.statusCode, result.body).toBe(200);
  });

  it('names the client by the last entry of X-Forwarded-For, the one the load balancer appended', async () => {
    const forwardedFor = { ...json, 'x-forwarded-for': ['203.0.113.9, 192.0.2.1', '198.51.100.23'] };

    const result = await handlerOf('authentication')(passwordLogin({ headers: forwardedFor }), lambdaContext());

    expect(result.statusCode, result.body).toBe(200);
    expect(bodyOf(result).data.ipAddress).toBe('198.51.100.23');
  });
});

describe('the forwarded client certificate', () => {
  const certificateLogin = (headers: Record<string, string[]>) =>
    albEvent('POST', '/edge/client/v1/authenticate', {
      query: { method: ['cert'] },
      headers: { ...json, ...headers },
      body: '{}',
    });

  it('logs in an enrolled identity behind the load balancer front door', async () => {
    const device = await enrolledDevice(controller, call, 'alb-header-login');

    const result = await handlerOf('authentication')(
      certificateLogin({ 'x-amzn-mtls-clientcert': [urlEncodedPem(device.credentials.cert)] }),
      lambdaContext(),
    );

    expect(result.statusCode, result.body).toBe(200);
    expect(bodyOf(result).data.identityId ?? bodyOf(result).data.identity.id).toBe(device.id);
  });

  it('is never read behind the API Gateway front door, nor from a proxy event: the request has no certificate', async () => {
    const device = await enrolledDevice(controller, call, 'alb-header-spoof');
    const header = urlEncodedPem(device.credentials.cert);

    const albUnderRestApi = await handlerOf('authentication', 'rest-api')(
      certificateLogin({ 'x-amzn-mtls-clientcert': [header] }),
      lambdaContext(),
    );
    const proxyUnderAlb = await handlerOf('authentication')(
      proxyEvent('POST', '/edge/client/v1/authenticate', {
        query: { method: 'cert' },
        headers: { 'Content-Type': 'application/json', 'X-Amzn-Mtls-Clientcert': header },
        body: {},
      }),
      lambdaContext(),
    );

    for (const result of [albUnderRestApi, proxyUnderAlb]) {
      expect(result.statusCode, result.body).toBe(401);
      expect(JSON.parse(result.body ?? '').error.code).toBe('INVALID_AUTH');
    }
  });

  it('of no known authenticator is refused as any wrong certificate', async () => {
    const device = await enrolledDevice(controller, call, 'alb-header-stranger');
    await call('DELETE', `/identities/${device.id}`);

    const result = await handlerOf('authentication')(
      certificateLogin({ 'x-amzn-mtls-clientcert': [urlEncodedPem(device.credentials.cert)] }),
      lambdaContext(),
    );

    expect(result.statusCode, result.body).toBe(401);
    expect(bodyOf(result).error.code).toBe('INVALID_AUTH');
  });

  it('that is malformed, or present twice, is a 400 in the envelope', async () => {
    const device = await enrolledDevice(controller, call, 'alb-header-twice');
    const header = urlEncodedPem(device.credentials.cert);
    const handler = handlerOf('authentication');

    const answers = await Promise.all(
      [['%E0%A4%A'], ['not a certificate'], [`${header}junk`], [header, header]].map((values) =>
        handler(certificateLogin({ 'x-amzn-mtls-clientcert': values }), lambdaContext()),
      ),
    );

    for (const result of answers) {
      expect(result.statusCode, result.body).toBe(400);
      expect(bodyOf(result).error.code).toBe('COULD_NOT_VALIDATE');
    }
  });
});

describe('a list page behind the load balancer', () => {
  it('shrinks to what fits in its 1 MB response and says so in meta.pagination, where the proxy event gets it whole', async () => {
    // 24 identities of 50 KB of tags each: 1.2 MB, more than a load balancer takes from a Lambda.
    const tags = { blob: 'x'.repeat(50 * 1024) };
    await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        createdId('/identities', { name: `alb-big-${String(i).padStart(2, '0')}`, type: 'User', isAdmin: false, tags }),
      ),
    );
    const filter = encodeURIComponent('name contains "alb-big-"');
    const page = (offset: number) =>
      handlerOf('identities')(
        albEvent('GET', `${M}/identities`, {
          query: { filter: [filter], limit: ['500'], offset: [String(offset)], sort: [encodeURIComponent('name asc')] },
          headers: { 'zt-session': [admin()] },
        }),
        lambdaContext(),
      );

    const first = await page(0);
    const { limit, totalCount } = bodyOf(first).meta.pagination;
    const rest = await page(limit);
    const whole = await handlerOf('identities')(
      proxyEvent('GET', `${M}/identities`, {
        query: { filter: 'name contains "alb-big-"', limit: '500' },
        headers: { 'zt-session': admin() },
      }),
      lambdaContext(),
    );

    expect(first.statusCode).toBe(200);
    expect(Buffer.byteLength(JSON.stringify(first))).toBeLessThanOrEqual(ALB_RESPONSE_BYTES);
    expect(totalCount).toBe(24);
    expect(limit).toBeGreaterThan(0);
    expect(limit).toBeLessThan(24);
    expect(bodyOf(first).data).toHaveLength(limit);
    const names = [...bodyOf(first).data, ...bodyOf(rest).data].map((identity: { name: string }) => identity.name);
    expect(names.slice(0, 24)).toEqual(Array.from({ length: 24 }, (_, i) => `alb-big-${String(i).padStart(2, '0')}`));
    expect(JSON.parse(whole.body).data).toHaveLength(24);
  });
});
