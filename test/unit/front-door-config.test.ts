import { describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';

const LAMBDA = { AWS_LAMBDA_FUNCTION_NAME: 'ziti-authentication' };
const SECRET_NAME = 'x-ziti-clientcert-7f3a9c2e41d86b05e9f1';
const PUBLIC = { PUBLIC_BASE_URL: 'https://ziti.example.com' };

describe('the front door setting', () => {
  it('is the REST API unless FRONT_DOOR says alb, and refuses anything else', () => {
    expect(loadConfig({}).frontDoor).toBe('rest-api');
    expect(loadConfig({ FRONT_DOOR: 'alb' }).frontDoor).toBe('alb');
    expect(() => loadConfig({ FRONT_DOOR: 'http-api' })).toThrow(/FRONT_DOOR must be rest-api or alb/);
  });

  it("reads the load balancer's certificate header by AWS's name locally, where the server strips client copies", () => {
    expect(loadConfig({ FRONT_DOOR: 'alb' }).albClientCertHeader).toBe('x-amzn-mtls-clientcert');
  });

  it('refuses, in Lambda behind the load balancer, a certificate header name a client could guess', () => {
    for (const name of [
      undefined,
      'X-Amzn-Mtls-Clientcert',
      'x-amzn-mtls-clientcert-renamed-but-still-amzn',
      'x-short',
    ]) {
      expect(() => loadConfig({ ...LAMBDA, ...PUBLIC, FRONT_DOOR: 'alb', ALB_CLIENT_CERT_HEADER: name })).toThrow(
        /ALB_CLIENT_CERT_HEADER/,
      );
    }
    expect(
      loadConfig({ ...LAMBDA, ...PUBLIC, FRONT_DOOR: 'alb', ALB_CLIENT_CERT_HEADER: SECRET_NAME }).albClientCertHeader,
    ).toBe(SECRET_NAME);
    expect(loadConfig({ ...LAMBDA }).frontDoor).toBe('rest-api');
    expect(() => loadConfig({ ALB_CLIENT_CERT_HEADER: 'bad name' })).toThrow(/letters, digits and hyphens/);
  });

  it("refuses, in Lambda behind the load balancer, to take its public origin from the client's Host", () => {
    const alb = { ...LAMBDA, FRONT_DOOR: 'alb', ALB_CLIENT_CERT_HEADER: SECRET_NAME };
    expect(() => loadConfig(alb)).toThrow(/FRONT_DOOR=alb in Lambda needs PUBLIC_BASE_URL/);
    expect(loadConfig({ ...alb, ...PUBLIC }).publicBaseUrl).toBe(PUBLIC.PUBLIC_BASE_URL);
    // Outside Lambda (npm start, the tests) and behind API Gateway the origin may still come from the request.
    expect(loadConfig({ FRONT_DOOR: 'alb' }).publicBaseUrl).toBeUndefined();
    expect(loadConfig({ ...LAMBDA }).publicBaseUrl).toBeUndefined();
  });
});
