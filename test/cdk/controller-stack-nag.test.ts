import { Stack } from 'aws-cdk-lib';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { describe, expect, it } from 'vitest';
import { ControllerStack } from '../../cdk/controller-stack.ts';
import { unacknowledgedNagFindings } from './unacknowledged-nag-findings.ts';

describe('cdk-nag (AwsSolutions and Serverless packs)', () => {
  it('finds nothing in the controller stack that is neither fixed nor acknowledged', () => {
    const findings = unacknowledgedNagFindings((app) => {
      new ControllerStack(app, 'NagController', { adminUsername: 'admin', apiSessionTimeoutMinutes: 30 });
    });
    expect(
      findings,
      'Fix each finding, or acknowledge it next to the construct that causes it with ' +
        'Validations.of(construct).acknowledge({ id, reason }) and the real reason',
    ).toEqual([]);
  });

  it.each([
    [
      'both custom domains in a Route 53 zone (alias records, a requested ownership certificate)',
      { hostedZoneId: 'Z0123456789ABCDEFGHIJ', hostedZoneName: 'example.com' },
    ],
    [
      "all three custom domains (the SDKs' front door too) in a Route 53 zone",
      { sdkDomainName: 'ziti-sdk.example.com', hostedZoneId: 'Z0123456789ABCDEFGHIJ', hostedZoneName: 'example.com' },
    ],
    [
      'both custom domains with an ownership certificate given and DNS kept elsewhere',
      { mtlsOwnershipCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc' },
    ],
  ])('finds nothing either with %s', (_, settings) => {
    const findings = unacknowledgedNagFindings((app) => {
      new ControllerStack(app, 'NagDomainsController', {
        adminUsername: 'admin',
        apiSessionTimeoutMinutes: 30,
        domainName: 'ziti.example.com',
        mtlsDomainName: 'ziti-mtls.example.com',
        ...settings,
      });
    });
    expect(findings).toEqual([]);
  });

  it('finds nothing either with the plain custom domain alone', () => {
    const findings = unacknowledgedNagFindings((app) => {
      new ControllerStack(app, 'NagDomainController', {
        adminUsername: 'admin',
        apiSessionTimeoutMinutes: 30,
        domainName: 'ziti.example.com',
      });
    });
    expect(findings).toEqual([]);
  });

  it('reports the errors and warnings of a construct nobody acknowledged', () => {
    const findings = unacknowledgedNagFindings((app) => {
      const stack = new Stack(app, 'Unacknowledged');
      new Secret(stack, 'Secret');
      new LambdaFunction(stack, 'Function', {
        runtime: Runtime.NODEJS_24_X,
        handler: 'index.handler',
        code: Code.fromInline('export const handler = async () => {};'),
      });
    });
    expect(findings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^error AwsSolutions-SMG4 at Unacknowledged\/Secret\/Resource: /),
        expect.stringMatching(/^warning Serverless-LambdaTracing at Unacknowledged\/Function\/Resource: /),
      ]),
    );
  });
});
