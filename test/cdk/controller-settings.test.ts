import { describe, expect, it } from 'vitest';
import { resolveControllerSettings } from '../../cdk/controller-settings.ts';

const noContext = () => undefined;

describe('resolveControllerSettings', () => {
  it('defaults to the admin user and a 30 minute API session timeout', () => {
    expect(resolveControllerSettings(noContext, {})).toEqual({ adminUsername: 'admin', apiSessionTimeoutMinutes: 30 });
  });

  it('prefers CDK context over the environment', () => {
    const context = (key: string) => ({ adminUsername: 'root', apiSessionTimeoutMinutes: '45' })[key];
    const env = { ZITI_ADMIN_USERNAME: 'ops', ZITI_API_SESSION_TIMEOUT_MINUTES: '10' };
    expect(resolveControllerSettings(context, env)).toEqual({ adminUsername: 'root', apiSessionTimeoutMinutes: 45 });
  });

  it('falls back to the environment', () => {
    const env = { ZITI_ADMIN_USERNAME: 'ops', ZITI_API_SESSION_TIMEOUT_MINUTES: '10' };
    expect(resolveControllerSettings(noContext, env)).toEqual({ adminUsername: 'ops', apiSessionTimeoutMinutes: 10 });
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

  it('rejects a blank admin username', () => {
    expect(() => resolveControllerSettings((key) => (key === 'adminUsername' ? '  ' : undefined), {})).toThrow(
      /adminUsername/,
    );
  });
});
