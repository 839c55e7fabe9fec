import { describe, expect, it } from 'vitest';
import { DEFAULT_API_LIMITS, resolveControllerSettings } from '../../cdk/controller-settings.ts';

const noContext = () => undefined;

describe('resolveControllerSettings', () => {
  it('defaults to the admin user, a 30 minute API session timeout and the default API limits', () => {
    expect(resolveControllerSettings(noContext, {})).toEqual({
      adminUsername: 'admin',
      apiSessionTimeoutMinutes: 30,
      ...DEFAULT_API_LIMITS,
    });
  });

  it('prefers CDK context over the environment', () => {
    const context = (key: string) => ({ adminUsername: 'root', apiSessionTimeoutMinutes: '45' })[key];
    const env = { ZITI_ADMIN_USERNAME: 'ops', ZITI_API_SESSION_TIMEOUT_MINUTES: '10' };
    expect(resolveControllerSettings(context, env)).toMatchObject({
      adminUsername: 'root',
      apiSessionTimeoutMinutes: 45,
    });
  });

  it('falls back to the environment', () => {
    const env = { ZITI_ADMIN_USERNAME: 'ops', ZITI_API_SESSION_TIMEOUT_MINUTES: '10' };
    expect(resolveControllerSettings(noContext, env)).toMatchObject({
      adminUsername: 'ops',
      apiSessionTimeoutMinutes: 10,
    });
  });

  it('lets JWKS endpoints be private addresses only when asked, and refuses anything but true or false', () => {
    expect(resolveControllerSettings(noContext, {}).jwksAllowPrivateAddresses).toBeUndefined();
    expect(
      resolveControllerSettings(noContext, { ZITI_JWKS_ALLOW_PRIVATE_IPS: 'true' }).jwksAllowPrivateAddresses,
    ).toBe(true);
    const context = (key: string) => (key === 'jwksAllowPrivateAddresses' ? true : undefined);
    expect(resolveControllerSettings(context, {}).jwksAllowPrivateAddresses).toBe(true);
    expect(() => resolveControllerSettings(noContext, { ZITI_JWKS_ALLOW_PRIVATE_IPS: 'yes' })).toThrow(
      /jwksAllowPrivateAddresses/,
    );
  });

  it('accepts a number from cdk.json', () => {
    const context = (key: string) => (key === 'apiSessionTimeoutMinutes' ? 60 : undefined);
    expect(resolveControllerSettings(context, {}).apiSessionTimeoutMinutes).toBe(60);
  });

  it.each(['0', '-5', '1.5', 'soon'])('rejects the session timeout %j', (value) => {
    expect(() => resolveControllerSettings(noContext, { ZITI_API_SESSION_TIMEOUT_MINUTES: value })).toThrow(
      /apiSessionTimeoutMinutes/,
    );
  });

  it('reads the API limits from CDK context or the environment', () => {
    const context = (key: string) => ({ apiRateLimit: 50, firewallRateLimit: '600' })[key];
    const env = { ZITI_API_RATE_LIMIT: '5', ZITI_API_BURST_LIMIT: '80', ZITI_FIREWALL_RATE_LIMIT: '700' };
    expect(resolveControllerSettings(context, env)).toMatchObject({
      apiRateLimit: 50,
      apiBurstLimit: 80,
      firewallRateLimit: 600,
    });
  });

  it.each([
    ['ZITI_API_RATE_LIMIT', '0', /apiRateLimit/],
    ['ZITI_API_BURST_LIMIT', '2.5', /apiBurstLimit/],
    // AWS WAF takes no rate-based limit under 10.
    ['ZITI_FIREWALL_RATE_LIMIT', '9', /firewallRateLimit must be an integer >= 10/],
  ])('rejects %s=%j', (name, value, error) => {
    expect(() => resolveControllerSettings(noContext, { [name]: value })).toThrow(error);
  });

  it('rejects a blank admin username', () => {
    expect(() => resolveControllerSettings((key) => (key === 'adminUsername' ? '  ' : undefined), {})).toThrow(
      /adminUsername/,
    );
  });
});
