import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { resolveControllerSettings } from '../../cdk/controller-settings.ts';
import { ControllerStack, type ControllerStackProps } from '../../cdk/controller-stack.ts';

/** Only `managementOnly`: the settings read without the domains SDKs need (refused otherwise). */
const managementOnly = (key: string) => (key === 'managementOnly' ? 'true' : undefined);
/** These context values and `managementOnly`. */
const withContext = (values: Record<string, unknown>) => (key: string) => ({ managementOnly: true, ...values })[key];

describe('resolveControllerSettings', () => {
  it('defaults to production, the admin user and a 30 minute API session timeout', () => {
    // The throttles and the web ACL's limit are left to the construct's defaults, so that only a value someone set is
    // passed on.
    expect(resolveControllerSettings(managementOnly, {})).toEqual({
      environment: 'prod',
      adminUsername: 'admin',
      apiSessionTimeoutMinutes: 30,
    });
  });

  it('prefers CDK context over the environment', () => {
    const context = withContext({ adminUsername: 'root', apiSessionTimeoutMinutes: '45' });
    const env = { ZITI_ADMIN_USERNAME: 'ops', ZITI_API_SESSION_TIMEOUT_MINUTES: '10' };
    expect(resolveControllerSettings(context, env)).toMatchObject({
      adminUsername: 'root',
      apiSessionTimeoutMinutes: 45,
    });
  });

  it('falls back to the environment', () => {
    const env = { ZITI_ADMIN_USERNAME: 'ops', ZITI_API_SESSION_TIMEOUT_MINUTES: '10' };
    expect(resolveControllerSettings(managementOnly, env)).toMatchObject({
      adminUsername: 'ops',
      apiSessionTimeoutMinutes: 10,
    });
  });

  it('lets JWKS endpoints be private addresses only when asked, and refuses anything but true or false', () => {
    expect(resolveControllerSettings(managementOnly, {}).jwksAllowPrivateAddresses).toBeUndefined();
    expect(
      resolveControllerSettings(managementOnly, { ZITI_JWKS_ALLOW_PRIVATE_IPS: 'true' }).jwksAllowPrivateAddresses,
    ).toBe(true);
    const context = withContext({ jwksAllowPrivateAddresses: true });
    expect(resolveControllerSettings(context, {}).jwksAllowPrivateAddresses).toBe(true);
    expect(() => resolveControllerSettings(managementOnly, { ZITI_JWKS_ALLOW_PRIVATE_IPS: 'yes' })).toThrow(
      /jwksAllowPrivateAddresses/,
    );
  });

  it('reads the request log sample rate from CDK context or the environment, and refuses one out of range', () => {
    expect(resolveControllerSettings(managementOnly, {})).not.toHaveProperty('requestLogSampleRate');
    expect(resolveControllerSettings(managementOnly, { ZITI_REQUEST_LOG_SAMPLE_RATE: '20' }).requestLogSampleRate).toBe(
      20,
    );
    const context = withContext({ requestLogSampleRate: 1 });
    expect(resolveControllerSettings(context, { ZITI_REQUEST_LOG_SAMPLE_RATE: '20' }).requestLogSampleRate).toBe(1);
    for (const value of ['0', '-1', '2.5', '1000001', 'often']) {
      expect(() => resolveControllerSettings(managementOnly, { ZITI_REQUEST_LOG_SAMPLE_RATE: value }), value).toThrow(
        /requestLogSampleRate/,
      );
    }
  });

  it("reads the routers' endpoint settings from CDK context or the environment, and refuses them without the endpoint", () => {
    expect(resolveControllerSettings(managementOnly, {})).not.toHaveProperty('routerEndpoint');
    const context = withContext({
      routerEndpoint: 'true',
      ctrlDomainName: 'Ctrl.Example.com',
      routerEndpointMaxCount: '8',
    });
    expect(resolveControllerSettings(context, { ZITI_ROUTER_ENDPOINT_PORT: '6262' })).toMatchObject({
      routerEndpoint: true,
      ctrlDomainName: 'ctrl.example.com',
      routerEndpointPort: 6262,
      routerEndpointMaxCount: 8,
    });
    expect(() => resolveControllerSettings(managementOnly, { ZITI_ROUTER_ENDPOINT_CPU: '512' })).toThrow(
      /routerEndpointCpu needs routerEndpoint: true/,
    );
    expect(() =>
      resolveControllerSettings(managementOnly, {
        ZITI_ROUTER_ENDPOINT: 'true',
        ZITI_ROUTER_ENDPOINT_MEMORY_MB: '4096',
      }),
    ).toThrow(/routerEndpointMemoryMb/);
  });

  it('accepts a number from cdk.json', () => {
    const context = withContext({ apiSessionTimeoutMinutes: 60 });
    expect(resolveControllerSettings(context, {}).apiSessionTimeoutMinutes).toBe(60);
  });

  it('reads the OIDC settings from CDK context or the environment, leaving them to the construct when unset', () => {
    const unset = resolveControllerSettings(managementOnly, {});
    expect([unset.oidcAuth, unset.oidcAccessTokenSeconds, unset.oidcRefreshTokenSeconds]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    const env = {
      ZITI_OIDC_AUTH: 'true',
      ZITI_OIDC_ACCESS_TOKEN_SECONDS: '600',
      ZITI_OIDC_REFRESH_TOKEN_SECONDS: '3600',
    };
    expect(resolveControllerSettings(managementOnly, env)).toMatchObject({
      oidcAuth: true,
      oidcAccessTokenSeconds: 600,
      oidcRefreshTokenSeconds: 3600,
    });
    const context = withContext({ oidcAuth: false, oidcAccessTokenSeconds: 900, oidcRefreshTokenSeconds: '7200' });
    expect(resolveControllerSettings(context, env)).toMatchObject({
      oidcAuth: false,
      oidcAccessTokenSeconds: 900,
      oidcRefreshTokenSeconds: 7200,
    });
  });

  it.each([
    ['ZITI_OIDC_AUTH', 'yes', /oidcAuth/],
    ['ZITI_OIDC_ACCESS_TOKEN_SECONDS', '9', /oidcAccessTokenSeconds must be an integer >= 10, got 9/],
    ['ZITI_OIDC_ACCESS_TOKEN_SECONDS', 'soon', /oidcAccessTokenSeconds must be an integer/],
    ['ZITI_OIDC_REFRESH_TOKEN_SECONDS', '59', /oidcRefreshTokenSeconds must be an integer >= 60, got 59/],
    ['ZITI_OIDC_REFRESH_TOKEN_SECONDS', '90.5', /oidcRefreshTokenSeconds must be an integer/],
  ])('rejects %s=%j', (name, value, message) => {
    expect(() => resolveControllerSettings(managementOnly, { [name]: value })).toThrow(message);
  });

  it.each(['0', '-5', '1.5', 'soon'])('rejects the session timeout %j', (value) => {
    expect(() => resolveControllerSettings(managementOnly, { ZITI_API_SESSION_TIMEOUT_MINUTES: value })).toThrow(
      /apiSessionTimeoutMinutes/,
    );
  });

  it('reads the fleet size and the login throttles from CDK context or the environment, the latter only when set', () => {
    expect(resolveControllerSettings(managementOnly, {})).not.toHaveProperty('loginRateLimit');
    const context = withContext({ fleetSize: '25000', loginBurstLimit: 600 });
    const env = { ZITI_FLEET_SIZE: '5', ZITI_LOGIN_RATE_LIMIT: '250' };
    expect(resolveControllerSettings(context, env)).toMatchObject({
      fleetSize: 25_000,
      loginRateLimit: 250,
      loginBurstLimit: 600,
    });
  });

  it.each([
    ['ZITI_FLEET_SIZE', '0', /fleetSize/],
    ['ZITI_LOGIN_RATE_LIMIT', '0', /loginRateLimit must be an integer >= 1/],
    ['ZITI_LOGIN_BURST_LIMIT', 'many', /loginBurstLimit/],
  ])('rejects %s=%j', (name, value, message) => {
    expect(() => resolveControllerSettings(managementOnly, { [name]: value })).toThrow(message);
  });

  it('reads the API limits from CDK context or the environment', () => {
    const context = withContext({ apiRateLimit: 50, firewallRateLimit: '600' });
    const env = { ZITI_API_RATE_LIMIT: '5', ZITI_API_BURST_LIMIT: '80', ZITI_FIREWALL_RATE_LIMIT: '700' };
    expect(resolveControllerSettings(context, env)).toMatchObject({
      apiRateLimit: 50,
      apiBurstLimit: 80,
      firewallRateLimit: 600,
    });
  });

  it("refuses the web ACL's limit without the web ACL, which would enforce nothing", () => {
    const env = { ZITI_FIREWALL: 'false', ZITI_FIREWALL_RATE_LIMIT: '600' };
    expect(() => resolveControllerSettings(managementOnly, env)).toThrow(
      /firewallRateLimit .* unset with firewall false/,
    );
    expect(resolveControllerSettings(managementOnly, { ZITI_FIREWALL: 'false' })).not.toHaveProperty(
      'firewallRateLimit',
    );
  });

  it.each([
    ['ZITI_API_RATE_LIMIT', '0', /apiRateLimit/],
    ['ZITI_API_BURST_LIMIT', '2.5', /apiBurstLimit/],
    // AWS WAF takes no rate-based limit under 10.
    ['ZITI_FIREWALL_RATE_LIMIT', '9', /firewallRateLimit must be an integer >= 10/],
  ])('rejects %s=%j', (name, value, error) => {
    expect(() => resolveControllerSettings(managementOnly, { [name]: value })).toThrow(error);
  });

  it('rejects a blank admin username', () => {
    expect(() => resolveControllerSettings((key) => (key === 'adminUsername' ? '  ' : undefined), {})).toThrow(
      /adminUsername/,
    );
  });

  describe('custom domains', () => {
    const DOMAIN = 'ziti.example.com';
    const MTLS = 'ziti-mtls.example.com';
    const OWNERSHIP = 'arn:aws:acm:eu-west-1:123456789012:certificate/0b1c2d3e-4f50';
    const ZONE = { hostedZoneId: 'Z0123456789ABCDEFGHIJ', hostedZoneName: 'example.com' };
    const fromContext = (values: Record<string, unknown>) => (key: string) => values[key];

    it('has none by default', () => {
      const settings = resolveControllerSettings(managementOnly, {});
      for (const key of ['domainName', 'mtlsDomainName', 'mtlsOwnershipCertificateArn', 'hostedZoneId'] as const) {
        expect(settings[key], key).toBeUndefined();
      }
    });

    it.each<[string, Record<string, unknown>]>([
      ['the plain domain alone', { domainName: DOMAIN }],
      ['the plain domain in a hosted zone', { domainName: DOMAIN, ...ZONE }],
      [
        'both domains with an ownership certificate',
        { domainName: DOMAIN, mtlsDomainName: MTLS, mtlsOwnershipCertificateArn: OWNERSHIP },
      ],
      ['both domains in a hosted zone', { domainName: DOMAIN, mtlsDomainName: MTLS, ...ZONE }],
      [
        'both domains in a hosted zone with an ownership certificate',
        { domainName: DOMAIN, mtlsDomainName: MTLS, mtlsOwnershipCertificateArn: OWNERSHIP, ...ZONE },
      ],
    ])('takes %s from CDK context', (_, values) => {
      expect(resolveControllerSettings(fromContext({ ...values, managementOnly: true }), {})).toMatchObject(values);
    });

    it("reads the ZITI_* environment, lowercases host names and drops a zone name's trailing dot", () => {
      const env = {
        ZITI_DOMAIN_NAME: 'Ziti.Example.com',
        ZITI_MTLS_DOMAIN_NAME: MTLS,
        ZITI_MTLS_OWNERSHIP_CERTIFICATE_ARN: OWNERSHIP,
        ZITI_HOSTED_ZONE_ID: ZONE.hostedZoneId,
        ZITI_HOSTED_ZONE_NAME: 'example.com.',
      };
      expect(resolveControllerSettings(managementOnly, env)).toMatchObject({
        domainName: DOMAIN,
        mtlsDomainName: MTLS,
        mtlsOwnershipCertificateArn: OWNERSHIP,
        ...ZONE,
      });
    });

    it.each<[string, Record<string, unknown>, RegExp]>([
      ['an mTLS domain without the plain one', { mtlsDomainName: MTLS, ...ZONE }, /mtlsDomainName needs domainName/],
      [
        'an mTLS domain without an ownership certificate or a hosted zone',
        { domainName: DOMAIN, mtlsDomainName: MTLS },
        /mtlsDomainName needs mtlsOwnershipCertificateArn .* or hostedZoneId and hostedZoneName/,
      ],
      ['one name for both domains', { domainName: DOMAIN, mtlsDomainName: DOMAIN, ...ZONE }, /must differ/],
      [
        'an ownership certificate without an mTLS domain',
        { domainName: DOMAIN, mtlsOwnershipCertificateArn: OWNERSHIP },
        /only for mtlsDomainName/,
      ],
      ['a hosted zone id without its name', { domainName: DOMAIN, hostedZoneId: ZONE.hostedZoneId }, /go together/],
      ['a hosted zone without a domain', { ...ZONE }, /for domainName/],
      ['a domain outside the hosted zone', { domainName: 'ziti.example.org', ...ZONE }, /not in the hosted zone/],
      [
        'an mTLS domain outside the hosted zone',
        { domainName: DOMAIN, mtlsDomainName: 'mtls.example.org', ...ZONE },
        /mtlsDomainName mtls.example.org is not in the hosted zone/,
      ],
      ['a URL for a host name', { domainName: 'https://ziti.example.com' }, /domainName must be a lowercase host name/],
      ['a wildcard host name', { domainName: '*.example.com' }, /domainName must be a lowercase host name/],
      ['a single label', { domainName: 'ziti' }, /domainName must be a lowercase host name/],
      [
        'a plain domain too long for a common name',
        { domainName: `${'a'.repeat(60)}.example.com` },
        /common name, at most 64 characters/,
      ],
      [
        'an ownership certificate that is not an ACM ARN',
        { domainName: DOMAIN, mtlsDomainName: MTLS, mtlsOwnershipCertificateArn: 'abc' },
        /mtlsOwnershipCertificateArn must be an ACM certificate ARN/,
      ],
      [
        'a malformed hosted zone id',
        { domainName: DOMAIN, hostedZoneId: 'z-1', hostedZoneName: 'example.com' },
        /hostedZoneId/,
      ],
      ['a domain name that is not a string', { domainName: 42 }, /domainName must be a string/],
    ])('refuses %s at synth', (_, values, error) => {
      expect(() => resolveControllerSettings(fromContext(values), {})).toThrow(error);
    });

    it('refuses the replaced mtlsCertificateArn, from context or the environment, saying what to set instead', () => {
      const message = /mtlsCertificateArn is no longer read.*mtlsOwnershipCertificateArn/;
      expect(() => resolveControllerSettings(fromContext({ mtlsCertificateArn: OWNERSHIP }), {})).toThrow(message);
      expect(() => resolveControllerSettings(managementOnly, { ZITI_MTLS_CERTIFICATE_ARN: OWNERSHIP })).toThrow(
        message,
      );
    });
  });
});

describe('settings only the REST API honours', () => {
  const LOAD_BALANCER = { ZITI_FRONT_DOOR: 'load-balancer', ZITI_DOMAIN_NAME: 'ziti.example.com' };

  it.each([
    ['ZITI_API_RATE_LIMIT', '500', /apiRateLimit is the REST API stage's throttling/],
    ['ZITI_API_BURST_LIMIT', '1000', /apiBurstLimit is the REST API stage's throttling/],
    ['ZITI_FLEET_SIZE', '20000', /fleetSize sizes API Gateway's throttles of the login/],
    ['ZITI_LOGIN_RATE_LIMIT', '100', /loginRateLimit is one of API Gateway's throttles/],
    ['ZITI_LOGIN_BURST_LIMIT', '200', /loginBurstLimit is one of API Gateway's throttles/],
    ['ZITI_DETAILED_METRICS', 'true', /detailedMetrics turns on API Gateway's per-method metrics/],
    ['ZITI_TRUSTSTORE_TRAIL', 'false', /truststoreTrail records the writes of the REST API's mTLS truststore/],
    ['ZITI_API_GATEWAY_CLOUDWATCH_ROLE', 'true', /apiGatewayCloudWatchRole sets the account's role/],
  ])('refuses %s=%s with the load balancer, saying why, and takes it with the REST API', (name, value, message) => {
    expect(() => resolveControllerSettings(managementOnly, { ...LOAD_BALANCER, [name]: value })).toThrow(message);
    expect(() => resolveControllerSettings(managementOnly, { ...LOAD_BALANCER, [name]: value })).toThrow(
      /leave it unset with frontDoor load-balancer/,
    );
    expect(() => resolveControllerSettings(managementOnly, { [name]: value })).not.toThrow();
  });

  it('refuses them from CDK context, and from the construct, whose props are not read from either', () => {
    const context = (key: string) =>
      ({ frontDoor: 'load-balancer', domainName: 'ziti.example.com', apiRateLimit: 50 })[key];
    expect(() => resolveControllerSettings(context, {})).toThrow(/apiRateLimit is the REST API stage's throttling/);
    const loadBalancer = { frontDoor: 'load-balancer', domainName: 'ziti.example.com' } as const;
    expect(() => new ControllerStack(new App(), 'Throttled', { ...loadBalancer, loginRateLimit: 100 })).toThrow(
      /loginRateLimit is one of API Gateway's throttles/,
    );
    expect(() => new ControllerStack(new App(), 'Metered', { ...loadBalancer, detailedMetrics: false })).toThrow(
      /detailedMetrics/,
    );
  });

  it('leaves them out of a load balancer deployment that does not set them', () => {
    const settings = resolveControllerSettings(managementOnly, LOAD_BALANCER);
    for (const key of ['apiRateLimit', 'apiBurstLimit', 'fleetSize', 'detailedMetrics', 'truststoreTrail'] as const) {
      expect(settings, key).not.toHaveProperty(key);
    }
  });
});

describe('numbers given to the construct', () => {
  it.each<[string, ControllerStackProps, RegExp]>([
    ['a stage rate of 0', { apiRateLimit: 0 }, /apiRateLimit must be an integer >= 1, got 0/],
    ['a fractional burst', { apiBurstLimit: 2.5 }, /apiBurstLimit must be an integer >= 1, got 2.5/],
    ["a web ACL limit under WAF's 10", { firewallRateLimit: 9 }, /firewallRateLimit must be an integer >= 10/],
    ["a web ACL limit over WAF's largest", { firewallRateLimit: 3e9 }, /firewallRateLimit must be at most 2000000000/],
    ['a fleet of none', { fleetSize: 0 }, /fleetSize must be an integer >= 1/],
    ['a login rate that is not a number', { loginRateLimit: Number.NaN }, /loginRateLimit must be an integer >= 1/],
    ['a negative login burst', { loginBurstLimit: -1 }, /loginBurstLimit must be an integer >= 1/],
    ['a session timeout of 0', { apiSessionTimeoutMinutes: 0 }, /apiSessionTimeoutMinutes must be an integer >= 1/],
    ['an access token of 5 s', { oidcAccessTokenSeconds: 5 }, /oidcAccessTokenSeconds must be an integer >= 10/],
    ['a refresh token of 30 s', { oidcRefreshTokenSeconds: 30 }, /oidcRefreshTokenSeconds must be an integer >= 60/],
    ['a web ACL limit without the web ACL', { firewall: false, firewallRateLimit: 600 }, /unset with firewall false/],
  ])('are checked as those from context are: %s is refused at synth', (_, props, message) => {
    expect(() => new ControllerStack(new App(), 'Checked', props)).toThrow(message);
  });
});

describe('a deployment SDKs can use', () => {
  const none = () => undefined;
  const ZONE = { ZITI_HOSTED_ZONE_ID: 'Z0123456789ABCDEFGHIJ', ZITI_HOSTED_ZONE_NAME: 'example.com' };
  const THREE_DOMAINS = {
    ZITI_DOMAIN_NAME: 'ziti.example.com',
    ZITI_MTLS_DOMAIN_NAME: 'ziti-mtls.example.com',
    ZITI_SDK_DOMAIN_NAME: 'ziti-sdk.example.com',
  };

  it('is refused without the domains, naming each missing one and the opt-in', () => {
    const refusal =
      /^SDKs cannot use this deployment: set domainName, mtlsDomainName, sdkDomainName .*managementOnly=true/;
    expect(() => resolveControllerSettings(none, {})).toThrow(refusal);
    expect(() =>
      resolveControllerSettings(none, { ZITI_ENVIRONMENT: 'staging', ZITI_ROUTER_ENDPOINT: 'true' }),
    ).toThrow(refusal);
  });

  it('is refused with the plain domain alone behind the REST API: certificate logins need the mTLS domain', () => {
    const env = { ZITI_DOMAIN_NAME: 'ziti.example.com', ...ZONE };
    expect(() => resolveControllerSettings(none, env)).toThrow(
      /set mtlsDomainName, sdkDomainName .*certificate logins/,
    );
    const withMtls = { ...env, ZITI_MTLS_DOMAIN_NAME: 'ziti-mtls.example.com' };
    expect(() => resolveControllerSettings(none, withMtls)).toThrow(/set sdkDomainName \(/);
  });

  it('is accepted with the three domains, in a hosted zone or with an ownership certificate', () => {
    expect(resolveControllerSettings(none, { ...THREE_DOMAINS, ...ZONE })).toMatchObject({
      domainName: 'ziti.example.com',
      mtlsDomainName: 'ziti-mtls.example.com',
      sdkDomainName: 'ziti-sdk.example.com',
    });
    const ownership = 'arn:aws:acm:eu-west-1:123456789012:certificate/0b1c2d3e-4f50';
    expect(() =>
      resolveControllerSettings(none, { ...THREE_DOMAINS, ZITI_MTLS_OWNERSHIP_CERTIFICATE_ARN: ownership }),
    ).not.toThrow();
  });

  it('is accepted behind the load balancer with its one domain', () => {
    const env = { ZITI_FRONT_DOOR: 'load-balancer', ZITI_DOMAIN_NAME: 'ziti.example.com' };
    expect(resolveControllerSettings(none, env)).toMatchObject({ frontDoor: 'load-balancer' });
  });

  it('is not asked for with managementOnly, from context or the environment, which goes no further', () => {
    const settings = resolveControllerSettings(none, { ZITI_MANAGEMENT_ONLY: 'true' });
    expect(settings).not.toHaveProperty('managementOnly');
    expect(() => resolveControllerSettings((key) => (key === 'managementOnly' ? true : undefined), {})).not.toThrow();
    expect(() => resolveControllerSettings(none, { ZITI_MANAGEMENT_ONLY: 'false' })).toThrow(/SDKs cannot use/);
    expect(() => resolveControllerSettings(none, { ZITI_MANAGEMENT_ONLY: 'yes' })).toThrow(
      /managementOnly must be true or false/,
    );
  });

  it('names a setting that is wrong in itself before what is missing', () => {
    expect(() => resolveControllerSettings(none, { ZITI_DOMAIN_NAME: 'ziti' })).toThrow(/lowercase host name/);
  });
});
