import { App, type CfnElement } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { TRUSTSTORE_KEY } from '../../cdk/controller-mtls-domain.ts';
import { resolveControllerSettings } from '../../cdk/controller-settings.ts';
import { ControllerStack } from '../../cdk/controller-stack.ts';
import { cdkJsonContext } from './synth-context.ts';

interface CfnResource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
  readonly DependsOn?: string[];
}
interface Statement {
  readonly Action: string | string[];
  readonly Resource: unknown;
}

const DOMAIN = 'mtls.ziti.example.com';
const OWNERSHIP_CERTIFICATE = 'arn:aws:acm:eu-west-1:123456789012:certificate/abc';

function synth(withDomain: boolean) {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new ControllerStack(app, 'MtlsController', {
    adminUsername: 'admin',
    apiSessionTimeoutMinutes: 30,
    ...(withDomain
      ? { domainName: 'ziti.example.com', mtlsDomainName: DOMAIN, mtlsOwnershipCertificateArn: OWNERSHIP_CERTIFICATE }
      : {}),
  });
  const template = app.synth().getStackByName('MtlsController').template as { Resources: Record<string, CfnResource> };
  const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as CfnElement);
  return { stack, resources: template.Resources, logicalId };
}

const ofType = (resources: Record<string, CfnResource>, type: string) =>
  Object.entries(resources).filter(([, resource]) => resource.Type === type);

function statementsOf(resources: Record<string, CfnResource>, roleId: string): Statement[] {
  return ofType(resources, 'AWS::IAM::Policy')
    .map(([, policy]) => policy)
    .filter((policy) => (policy.Properties.Roles as { Ref?: string }[]).some((role) => role.Ref === roleId))
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

function environmentOf(resource: CfnResource): Record<string, unknown> {
  return (resource.Properties.Environment as { Variables?: Record<string, unknown> })?.Variables ?? {};
}

describe('the mTLS domain', () => {
  const { stack, resources, logicalId } = synth(true);
  const bucketId = logicalId(stack.controller.mtls!.bucket);

  it('keeps the truststore in a versioned, private, encrypted bucket that outlives the stack', () => {
    const bucket = resources[bucketId]!;
    expect(bucket.Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.Properties.BucketEncryption).toBeDefined();
  });

  it('is a regional TLS 1.2 domain whose truststore is that object, made after the bootstrap published it', () => {
    const [domainId, domain] = ofType(resources, 'AWS::ApiGateway::DomainName').find(
      ([, candidate]) => candidate.Properties.DomainName === DOMAIN,
    ) as [string, CfnResource];
    expect(domain.Properties).toMatchObject({
      DomainName: DOMAIN,
      // The server certificate the bootstrap imported (controller-domain.test.ts), shown to be ours with this one.
      RegionalCertificateArn: { 'Fn::GetAtt': [logicalId(stack.controller.bootstrap.run), 'ServerCertificateArn'] },
      OwnershipVerificationCertificateArn: OWNERSHIP_CERTIFICATE,
      SecurityPolicy: 'TLS_1_2',
      EndpointConfiguration: { Types: ['REGIONAL'] },
    });
    const uri = JSON.stringify((domain.Properties.MutualTlsAuthentication as { TruststoreUri: unknown }).TruststoreUri);
    expect(uri).toContain(bucketId);
    expect(uri).toContain(TRUSTSTORE_KEY);
    expect(domain.DependsOn ?? []).toContain(logicalId(stack.controller.bootstrap.run));
    const [, mapping] = ofType(resources, 'AWS::ApiGateway::BasePathMapping').find(
      ([, candidate]) => (candidate.Properties.DomainName as { Ref?: string }).Ref === domainId,
    ) as [string, CfnResource];
    expect(mapping.Properties.BasePath).toBeUndefined();
    expect(mapping.Properties.RestApiId).toEqual({ Ref: logicalId(stack.controller.api!.restApi) });
  });

  it('lets only the bootstrap and the pki function publish it, and only pki re-point the domain', () => {
    const functions = ofType(resources, 'AWS::Lambda::Function');
    const publishers = functions.filter(([, fn]) => 'TRUSTSTORE_BUCKET' in environmentOf(fn)).map(([id]) => id);
    expect(publishers.sort()).toEqual(
      [logicalId(stack.controller.bootstrap.function), logicalId(stack.controller.functions.get('pki')!)].sort(),
    );
    const pki = resources[logicalId(stack.controller.functions.get('pki')!)]!;
    expect(environmentOf(pki)).toMatchObject({ TRUSTSTORE_KEY, MTLS_DOMAIN_NAME: DOMAIN });
    expect(environmentOf(resources[logicalId(stack.controller.bootstrap.function)]!).MTLS_DOMAIN_NAME).toBeUndefined();
    const pkiRole = (pki.Properties.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
    const patch = statementsOf(resources, pkiRole).find((statement) => statement.Action === 'apigateway:PATCH');
    expect(JSON.stringify(patch?.Resource)).toContain(`/domainnames/${DOMAIN}`);
    for (const [id, fn] of functions) {
      const role = (fn.Properties.Role as { 'Fn::GetAtt'?: [string] })['Fn::GetAtt']?.[0];
      if (!role || id === logicalId(stack.controller.functions.get('pki')!)) continue;
      const actions = statementsOf(resources, role).flatMap((statement) => [statement.Action].flat());
      expect(actions, id).not.toContain('apigateway:PATCH');
    }
  });
});

describe('without a domain name', () => {
  it('still keeps the truststore, but makes no mTLS domain', () => {
    const { resources } = synth(false);
    expect(ofType(resources, 'AWS::S3::Bucket').length).toBeGreaterThan(0);
    expect(ofType(resources, 'AWS::ApiGateway::DomainName')).toEqual([]);
  });

  it('refuses an mTLS domain name alone, and the certificate setting it replaced', () => {
    expect(() => resolveControllerSettings((key) => (key === 'mtlsDomainName' ? DOMAIN : undefined), {})).toThrow(
      /mtlsDomainName needs domainName/,
    );
    expect(() =>
      resolveControllerSettings(
        (key) => ({ mtlsDomainName: DOMAIN, mtlsCertificateArn: OWNERSHIP_CERTIFICATE })[key],
        {},
      ),
    ).toThrow(/mtlsCertificateArn is no longer read/);
  });
});
