import { Stack, Validations } from 'aws-cdk-lib';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { describe, expect, it } from 'vitest';
import { ControllerStack, type ControllerStackProps } from '../../cdk/controller-stack.ts';
import { nagReport, unacknowledgedNagFindings } from './unacknowledged-nag-findings.ts';

const DOMAINS = { domainName: 'ziti.example.com', mtlsDomainName: 'ziti-mtls.example.com' };
const ZONE = { hostedZoneId: 'Z0123456789ABCDEFGHIJ', hostedZoneName: 'example.com' };

describe('cdk-nag (AwsSolutions and Serverless packs)', () => {
  it.each<[string, ControllerStackProps]>([
    ['the defaults', {}],
    [
      'both custom domains in a Route 53 zone (alias records, a requested ownership certificate)',
      { ...DOMAINS, ...ZONE },
    ],
    [
      "all three custom domains (the SDKs' front door too) in a Route 53 zone",
      { ...DOMAINS, sdkDomainName: 'ziti-sdk.example.com', ...ZONE },
    ],
    [
      'both custom domains with an ownership certificate given and DNS kept elsewhere',
      { ...DOMAINS, mtlsOwnershipCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc' },
    ],
    ['the plain custom domain alone', { domainName: 'ziti.example.com' }],
    [
      'an imported table, an e-mailed alarm topic, scheduled rotation and the account logging role',
      {
        tableName: 'ziti-controller-restored',
        alarmEmail: 'ops@example.com',
        adminPasswordRotationDays: 30,
        apiGatewayCloudWatchRole: true,
        detailedMetrics: true,
      },
    ],
    [
      "the operator's own topic, firewall and trail",
      {
        alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:paging',
        alarmEmail: 'ops@example.com',
        firewall: false,
        truststoreTrail: false,
      },
    ],
    [
      'the load balancer front door in a Route 53 zone, with a provisioned table',
      { frontDoor: 'load-balancer', domainName: 'ziti.example.com', ...ZONE, tableBillingMode: 'provisioned' },
    ],
    [
      "the load balancer front door in the operator's VPC, behind the operator's firewall",
      {
        frontDoor: 'load-balancer',
        domainName: 'ziti.example.com',
        vpcId: 'vpc-0123456789abcdef0',
        publicSubnetIds: ['subnet-0123456a', 'subnet-0123456b'],
        firewall: false,
      },
    ],
    [
      "the routers' endpoint (NLB and Fargate) at a domain of its own in a Route 53 zone",
      { routerEndpoint: true, ctrlDomainName: 'ctrl.example.com', domainName: 'ziti.example.com', ...ZONE },
    ],
  ])('finds nothing unacknowledged, and every acknowledgement is used, with %s', (_, props) => {
    const report = nagReport((app) => {
      new ControllerStack(app, 'NagController', { adminUsername: 'admin', apiSessionTimeoutMinutes: 30, ...props });
    });
    expect(
      report.findings,
      'Fix each finding, or acknowledge it next to the construct that causes it with ' +
        'Validations.of(construct).acknowledge({ id, reason }) and the real reason',
    ).toEqual([]);
    expect(
      report.unusedAcknowledgements,
      'An acknowledgement that suppresses nothing is a stale claim: remove it, or make it conditional on what causes it',
    ).toEqual([]);
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

  it('reports an acknowledgement that suppresses nothing', () => {
    const { unusedAcknowledgements } = nagReport((app) => {
      const stack = new Stack(app, 'Stale');
      const secret = new Secret(stack, 'Secret');
      Validations.of(secret).acknowledge({ id: 'AwsSolutions-S1', reason: 'no bucket here' });
      Validations.of(secret).acknowledge({ id: 'AwsSolutions-SMG4', reason: 'the finding it suppresses' });
    });
    expect(unusedAcknowledgements).toEqual(['AwsSolutions-S1 at Stale/Secret']);
  });
});
