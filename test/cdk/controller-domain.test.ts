import { App, type CfnElement } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { SERVER_CERTIFICATE_TAG_KEY } from '#shared/pki/certificate-importer.ts';
import { RENEW_SERVER_CERTIFICATE_EVENT } from '../../cdk/controller-bootstrap.ts';
import type { DomainSettings } from '../../cdk/controller-settings.ts';
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
  readonly Condition?: Record<string, Record<string, unknown>>;
}
type Intrinsic = { readonly Ref?: string; readonly 'Fn::GetAtt'?: readonly [string, string] };

const DOMAIN = 'ziti.example.com';
const MTLS_DOMAIN = 'ziti-mtls.example.com';
const OWNERSHIP_CERTIFICATE = 'arn:aws:acm:eu-west-1:123456789012:certificate/ownership';
const ZONE = { hostedZoneId: 'Z0123456789ABCDEFGHIJ', hostedZoneName: 'example.com' };
const STACK_NAME = 'DomainController';

function synth(settings: DomainSettings) {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new ControllerStack(app, STACK_NAME, {
    adminUsername: 'admin',
    apiSessionTimeoutMinutes: 30,
    ...settings,
  });
  const template = app.synth().getStackByName(STACK_NAME).template as {
    Resources: Record<string, CfnResource>;
    Outputs: Record<string, { Value: unknown }>;
  };
  const resources = template.Resources;
  const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);
  const statementsOfRole = (roleId: string): Statement[] =>
    ofType('AWS::IAM::Policy')
      .filter(([, policy]) => (policy.Properties.Roles as Intrinsic[]).some((role) => role.Ref === roleId))
      .flatMap(([, policy]) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  const resourceById = (id: string) => {
    const resource = resources[id];
    if (!resource) throw new Error(`no resource ${id}`);
    return resource;
  };
  const roleOf = (functionId: string) =>
    (resourceById(functionId).Properties.Role as Intrinsic)['Fn::GetAtt']?.[0] ?? 'no role';
  const environmentOf = (functionId: string) =>
    (resourceById(functionId).Properties.Environment as { Variables: Record<string, unknown> }).Variables;
  const domainNamed = (name: string) => {
    const found = ofType('AWS::ApiGateway::DomainName').find(([, domain]) => domain.Properties.DomainName === name);
    if (!found) throw new Error(`no domain ${name}`);
    return found;
  };
  const bootstrapRunId = logicalId(stack.controller.bootstrap.run);
  const bootstrapFunctionId = logicalId(stack.controller.bootstrap.function);
  const bootstrapAliasId = logicalId(stack.controller.bootstrap.function.live);
  // The schedules but the ended sessions' sweep's, which every stack has (controller-session-sweep.test.ts), and what
  // they may invoke.
  const sweepScheduleId = logicalId(stack.controller.sessionSweep.schedule);
  const renewalRules = () => ofType('AWS::Events::Rule').filter(([id]) => id !== sweepScheduleId);
  const renewalPermissions = () =>
    ofType('AWS::Lambda::Permission').filter(
      ([, permission]) =>
        permission.Properties.Principal === 'events.amazonaws.com' &&
        !JSON.stringify(permission.Properties.SourceArn).includes(`"${sweepScheduleId}"`),
    );
  return {
    stack,
    resources,
    outputs: template.Outputs,
    logicalId,
    ofType,
    statementsOfRole,
    roleOf,
    environmentOf,
    domainNamed,
    bootstrapRunId,
    bootstrapFunctionId,
    bootstrapAliasId,
    renewalRules,
    renewalPermissions,
  };
}

const actionsOf = (statement: Statement) => [statement.Action].flat();
const serverCertificateAttribute = (bootstrapRunId: string) => ({
  'Fn::GetAtt': [bootstrapRunId, 'ServerCertificateArn'],
});

describe('the plain custom domain', () => {
  const synthesised = synth({ domainName: DOMAIN });
  const { resources, ofType, domainNamed, bootstrapRunId, logicalId, stack } = synthesised;

  it('is a regional TLS 1.2 domain serving the server certificate the bootstrap run answers', () => {
    const [, domain] = domainNamed(DOMAIN);
    expect(domain.Properties).toEqual({
      DomainName: DOMAIN,
      EndpointConfiguration: { Types: ['REGIONAL'] },
      SecurityPolicy: 'TLS_1_2',
      // A reference to the run's attribute: CloudFormation makes the domain after the bootstrap imported it.
      RegionalCertificateArn: serverCertificateAttribute(bootstrapRunId),
      Tags: expect.arrayContaining([{ Key: 'ziti:environment', Value: 'prod' }]),
    });
    expect(ofType('AWS::ApiGateway::DomainName')).toHaveLength(1);
  });

  it("maps the REST API's stage at the domain's root, so SDKs reach /edge/client/v1 with no stage name", () => {
    const [domainId] = domainNamed(DOMAIN);
    const mappings = ofType('AWS::ApiGateway::BasePathMapping').filter(
      ([, mapping]) => (mapping.Properties.DomainName as Intrinsic).Ref === domainId,
    );
    expect(mappings).toHaveLength(1);
    expect(mappings[0]?.[1].Properties).toEqual({
      DomainName: { Ref: domainId },
      RestApiId: { Ref: logicalId(stack.controller.api!.restApi) },
      Stage: { Ref: stack.getLogicalId(stack.controller.api!.restApi.deploymentStage.node.defaultChild as CfnElement) },
    });
    expect(mappings[0]?.[1].Properties.BasePath).toBeUndefined();
  });

  it('names the domain in every API function as PUBLIC_BASE_URL (the enrollment JWT issuer)', () => {
    for (const [group, fn] of stack.controller.functions) {
      expect(synthesised.environmentOf(logicalId(fn)).PUBLIC_BASE_URL, group).toBe(`https://${DOMAIN}`);
    }
  });

  it('outputs the regional target and its hosted zone for DNS, and makes no record without a hosted zone', () => {
    const [domainId] = domainNamed(DOMAIN);
    expect(synthesised.outputs.DomainTarget?.Value).toEqual({ 'Fn::GetAtt': [domainId, 'RegionalDomainName'] });
    expect(synthesised.outputs.DomainTargetHostedZoneId?.Value).toEqual({
      'Fn::GetAtt': [domainId, 'RegionalHostedZoneId'],
    });
    expect(ofType('AWS::Route53::RecordSet')).toEqual([]);
    expect(synthesised.outputs.MtlsDomainTarget).toBeUndefined();
  });

  it('gives the bootstrap the names and the tag, and re-runs it when the names change', () => {
    expect(synthesised.environmentOf(synthesised.bootstrapFunctionId)).toMatchObject({
      SERVER_NAMES: DOMAIN,
      SERVER_CERTIFICATE_TAG: STACK_NAME,
    });
    expect(resources[bootstrapRunId]?.Properties.serverNames).toBe(DOMAIN);
  });
});

describe('the server certificate renewal', () => {
  const { resources, bootstrapAliasId, renewalRules, renewalPermissions } = synth({ domainName: DOMAIN });

  it("invokes the bootstrap function's live alias every day with the renewal event", () => {
    const rules = renewalRules();
    expect(rules).toHaveLength(1);
    const [ruleId, rule] = rules[0]!;
    expect(rule.Properties).toMatchObject({ ScheduleExpression: 'rate(1 day)', State: 'ENABLED' });
    expect(rule.Properties.Targets).toEqual([
      {
        Arn: { Ref: bootstrapAliasId },
        Id: expect.any(String),
        Input: JSON.stringify(RENEW_SERVER_CERTIFICATE_EVENT),
      },
    ]);
    expect(JSON.parse(String((rule.Properties.Targets as { Input: string }[])[0]?.Input))).toEqual({
      renewServerCertificate: true,
    });
    const permissions = renewalPermissions();
    expect(permissions.map(([, permission]) => permission.Properties)).toEqual([
      {
        Action: 'lambda:InvokeFunction',
        FunctionName: { Ref: bootstrapAliasId },
        Principal: 'events.amazonaws.com',
        SourceArn: { 'Fn::GetAtt': [ruleId, 'Arn'] },
      },
    ]);
    expect(resources[ruleId]).toBeDefined();
  });
});

describe('importing into ACM', () => {
  const { ofType, statementsOfRole, roleOf, bootstrapFunctionId } = synth({
    domainName: DOMAIN,
    mtlsDomainName: MTLS_DOMAIN,
    ...ZONE,
  });
  const certificates = {
    'Fn::Join': [
      '',
      [
        'arn:',
        { Ref: 'AWS::Partition' },
        ':acm:',
        { Ref: 'AWS::Region' },
        ':',
        { Ref: 'AWS::AccountId' },
        ':certificate/*',
      ],
    ],
  };

  it('lets the bootstrap import only certificates tagged with the stack, and re-import only into those', () => {
    const acm = statementsOfRole(roleOf(bootstrapFunctionId)).filter((statement) =>
      actionsOf(statement).some((action) => action.startsWith('acm:')),
    );
    expect(acm).toEqual([
      expect.objectContaining({
        Action: ['acm:AddTagsToCertificate', 'acm:ImportCertificate'],
        Resource: certificates,
        Condition: {
          StringEquals: { [`aws:RequestTag/${SERVER_CERTIFICATE_TAG_KEY}`]: STACK_NAME },
          'ForAllValues:StringEquals': { 'aws:TagKeys': [SERVER_CERTIFICATE_TAG_KEY] },
        },
      }),
      expect.objectContaining({
        Action: 'acm:ImportCertificate',
        Resource: certificates,
        Condition: { StringEquals: { [`aws:ResourceTag/${SERVER_CERTIFICATE_TAG_KEY}`]: STACK_NAME } },
      }),
    ]);
  });

  it('grants no other role anything in ACM', () => {
    const bootstrapRole = roleOf(bootstrapFunctionId);
    for (const [roleId] of ofType('AWS::IAM::Role')) {
      if (roleId === bootstrapRole) continue;
      const actions = statementsOfRole(roleId).flatMap(actionsOf);
      expect(
        actions.filter((action) => action.startsWith('acm:')),
        roleId,
      ).toEqual([]);
    }
  });
});

describe('the mTLS domain beside it', () => {
  it('serves the same imported certificate, proving ownership with a DNS-validated certificate requested in the zone', () => {
    const { domainNamed, bootstrapRunId, ofType, stack, logicalId, outputs } = synth({
      domainName: DOMAIN,
      mtlsDomainName: MTLS_DOMAIN,
      ...ZONE,
    });
    const [mtlsId, mtls] = domainNamed(MTLS_DOMAIN);
    const [certificateId, certificate] = ofType('AWS::CertificateManager::Certificate')[0]!;
    expect(ofType('AWS::CertificateManager::Certificate')).toHaveLength(1);
    expect(certificate.Properties).toMatchObject({
      DomainName: MTLS_DOMAIN,
      ValidationMethod: 'DNS',
      DomainValidationOptions: [{ DomainName: MTLS_DOMAIN, HostedZoneId: ZONE.hostedZoneId }],
    });
    expect(mtls.Properties).toMatchObject({
      RegionalCertificateArn: serverCertificateAttribute(bootstrapRunId),
      OwnershipVerificationCertificateArn: { Ref: certificateId },
      SecurityPolicy: 'TLS_1_2',
      EndpointConfiguration: { Types: ['REGIONAL'] },
    });
    const mapping = ofType('AWS::ApiGateway::BasePathMapping').find(
      ([, candidate]) => (candidate.Properties.DomainName as Intrinsic).Ref === mtlsId,
    );
    expect(mapping?.[1].Properties.BasePath).toBeUndefined();
    expect(mapping?.[1].Properties.RestApiId).toEqual({ Ref: logicalId(stack.controller.api!.restApi) });
    expect(outputs.MtlsDomainTarget?.Value).toEqual({ 'Fn::GetAtt': [mtlsId, 'RegionalDomainName'] });
  });

  it('makes alias records for both names in the hosted zone', () => {
    const { ofType, domainNamed } = synth({ domainName: DOMAIN, mtlsDomainName: MTLS_DOMAIN, ...ZONE });
    const records = ofType('AWS::Route53::RecordSet').map(([, record]) => record.Properties);
    expect(records).toHaveLength(2);
    for (const name of [DOMAIN, MTLS_DOMAIN]) {
      const [domainId] = domainNamed(name);
      expect(records).toContainEqual({
        Name: `${name}.`,
        Type: 'A',
        HostedZoneId: ZONE.hostedZoneId,
        AliasTarget: {
          DNSName: { 'Fn::GetAtt': [domainId, 'RegionalDomainName'] },
          HostedZoneId: { 'Fn::GetAtt': [domainId, 'RegionalHostedZoneId'] },
        },
      });
    }
  });

  it('takes the ownership certificate given instead, and leaves DNS to the operator without a zone', () => {
    const { domainNamed, ofType, environmentOf, bootstrapFunctionId } = synth({
      domainName: DOMAIN,
      mtlsDomainName: MTLS_DOMAIN,
      mtlsOwnershipCertificateArn: OWNERSHIP_CERTIFICATE,
    });
    expect(domainNamed(MTLS_DOMAIN)[1].Properties.OwnershipVerificationCertificateArn).toBe(OWNERSHIP_CERTIFICATE);
    expect(ofType('AWS::CertificateManager::Certificate')).toEqual([]);
    expect(ofType('AWS::Route53::RecordSet')).toEqual([]);
    // The plain domain first: it is the certificate's common name.
    expect(environmentOf(bootstrapFunctionId).SERVER_NAMES).toBe(`${DOMAIN},${MTLS_DOMAIN}`);
  });
});

describe('without a custom domain', () => {
  const {
    ofType,
    stack,
    logicalId,
    environmentOf,
    statementsOfRole,
    roleOf,
    bootstrapFunctionId,
    resources,
    bootstrapRunId,
    renewalRules,
  } = synth({});

  it('makes no domain, imports no certificate and schedules no renewal', () => {
    expect(ofType('AWS::ApiGateway::DomainName')).toEqual([]);
    expect(ofType('AWS::ApiGateway::BasePathMapping')).toEqual([]);
    expect(renewalRules()).toEqual([]);
    expect(ofType('AWS::CertificateManager::Certificate')).toEqual([]);
    expect(environmentOf(bootstrapFunctionId).SERVER_NAMES).toBeUndefined();
    expect(resources[bootstrapRunId]?.Properties.serverNames).toBeUndefined();
    expect(
      statementsOfRole(roleOf(bootstrapFunctionId))
        .flatMap(actionsOf)
        .filter((a) => a.startsWith('acm:')),
    ).toEqual([]);
  });

  it('gives the functions no PUBLIC_BASE_URL: they answer with the host and stage a request came through', () => {
    for (const [group, fn] of stack.controller.functions) {
      expect(environmentOf(logicalId(fn)).PUBLIC_BASE_URL, group).toBeUndefined();
    }
  });
});

describe('inconsistent domain settings', () => {
  it.each<[string, DomainSettings, RegExp]>([
    [
      'an mTLS domain without the plain one',
      { mtlsDomainName: MTLS_DOMAIN, ...ZONE },
      /mtlsDomainName needs domainName/,
    ],
    [
      'an mTLS domain without an ownership certificate or a zone',
      { domainName: DOMAIN, mtlsDomainName: MTLS_DOMAIN },
      /needs mtlsOwnershipCertificateArn/,
    ],
  ])('are refused when the stack is built with %s', (_, settings, error) => {
    expect(() => synth(settings)).toThrow(error);
  });
});

describe("the SDKs' front door", () => {
  const SDK_DOMAIN = 'ziti-sdk.example.com';

  it('is a third plain domain at the root serving the server certificate, named to every API function', () => {
    const { stack, domainNamed, ofType, environmentOf, logicalId, bootstrapRunId, outputs } = synth({
      domainName: DOMAIN,
      mtlsDomainName: MTLS_DOMAIN,
      sdkDomainName: SDK_DOMAIN,
      ...ZONE,
    });
    const [doorId, door] = domainNamed(SDK_DOMAIN);
    expect(door.Properties).toMatchObject({
      EndpointConfiguration: { Types: ['REGIONAL'] },
      SecurityPolicy: 'TLS_1_2',
      RegionalCertificateArn: serverCertificateAttribute(bootstrapRunId),
    });
    expect(door.Properties.MutualTlsAuthentication).toBeUndefined();
    const mapping = ofType('AWS::ApiGateway::BasePathMapping').find(
      ([, candidate]) => (candidate.Properties.DomainName as Intrinsic).Ref === doorId,
    );
    expect(mapping?.[1].Properties.BasePath).toBeUndefined();
    expect(outputs.SdkDomainTarget?.Value).toEqual({ 'Fn::GetAtt': [doorId, 'RegionalDomainName'] });
    expect(ofType('AWS::Route53::RecordSet').map(([, record]) => record.Properties.Name)).toContain(`${SDK_DOMAIN}.`);
    for (const [, fn] of stack.controller.functions) {
      expect(environmentOf(logicalId(fn))).toMatchObject({
        MTLS_BASE_URL: `https://${MTLS_DOMAIN}`,
        SDK_BASE_URL: `https://${SDK_DOMAIN}`,
      });
    }
    expect(environmentOf(logicalId(stack.controller.bootstrap.function)).SERVER_NAMES).toBe(
      `${DOMAIN},${MTLS_DOMAIN},${SDK_DOMAIN}`,
    );
  });

  it('needs the mTLS domain, and a name of its own', () => {
    expect(() => synth({ domainName: DOMAIN, sdkDomainName: SDK_DOMAIN })).toThrow(/needs mtlsDomainName/);
    expect(() => synth({ domainName: DOMAIN, mtlsDomainName: MTLS_DOMAIN, sdkDomainName: DOMAIN, ...ZONE })).toThrow(
      /must differ/,
    );
  });
});
