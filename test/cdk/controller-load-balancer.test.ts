import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { Vpc } from 'aws-cdk-lib/aws-ec2';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { LOGIN_PATH_PATTERN } from '#shared/rate-limit/login-routes.ts';
import { resourcesOf } from '#shared/routes/resource-paths.ts';
import type { HttpMethod, OperationGroup } from '#shared/routes/route.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import { FLEET_PRICES } from '../../bench/aws-prices.ts';
import { FLEET_ASSUMPTIONS } from '../../bench/fleet-bill.ts';
import {
  CLIENT_CERT_HEADER_ATTRIBUTE,
  ControllerLoadBalancer,
  MAX_TARGET_GROUP_NAME,
  notFoundBody,
  targetGroupNameOf,
} from '../../cdk/controller-load-balancer.ts';
import { resolveControllerSettings } from '../../cdk/controller-settings.ts';
import { ControllerStack, type ControllerStackProps } from '../../cdk/controller-stack.ts';
import { LISTENER_RULE_LIMITS } from '../../cdk/load-balancer-rules.ts';
import { operationGroupsOf } from '../../cdk/operation-groups.ts';
import { cdkJsonContext } from './synth-context.ts';

interface CfnResource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
  readonly DependsOn?: string[];
}

interface RuleCondition {
  readonly Field: string;
  readonly PathPatternConfig?: { readonly Values: string[] };
  readonly HttpRequestMethodConfig?: { readonly Values: string[] };
}

interface ListenerRule {
  readonly Priority: number;
  readonly Conditions: RuleCondition[];
  readonly Actions: { readonly Type: string; readonly TargetGroupArn?: { Ref: string } }[];
}

const DOMAIN = { domainName: 'ziti.example.com', hostedZoneId: 'Z0123456789ABCDEFGHIJ', hostedZoneName: 'example.com' };

function synth(props: ControllerStackProps) {
  // Bundling skipped: the template does not depend on the bundle.
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new ControllerStack(app, 'FrontDoorController', { adminUsername: 'admin', ...props });
  const template = Template.fromStack(stack);
  const resources = (template.toJSON() as { Resources: Record<string, CfnResource> }).Resources;
  const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);
  const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const groupFunction = (group: OperationGroup) => {
    const fn = stack.controller.functions.get(group);
    if (!fn) throw new Error(`no function for ${group}`);
    return fn;
  };
  return { stack, template, resources, ofType, logicalId, groupFunction };
}

/** An ALB path pattern as the load balancer reads it: `*` any characters (`/` too), `?` one, the rest literal. */
function pathPatternMatches(pattern: string, path: string): boolean {
  const source = [...pattern]
    .map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\/-]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`).test(path);
}

/** The rule that takes `method path`: the first matching by priority; none: the listener's default answer. */
function ruleOf(
  rules: readonly ListenerRule[],
  method: HttpMethod | 'OPTIONS',
  path: string,
): ListenerRule | undefined {
  return [...rules]
    .sort((a, b) => a.Priority - b.Priority)
    .find((each) =>
      each.Conditions.every((condition) => {
        if (condition.Field === 'path-pattern') {
          return (condition.PathPatternConfig?.Values ?? []).some((pattern) => pathPatternMatches(pattern, path));
        }
        if (condition.Field === 'http-request-method') {
          return (condition.HttpRequestMethodConfig?.Values ?? []).includes(method);
        }
        throw new Error(`unexpected condition ${condition.Field}`);
      }),
    );
}

/** The target group the listener's rules send `method path` to; none: the default. */
function routedTo(rules: readonly ListenerRule[], method: HttpMethod | 'OPTIONS', path: string): string | undefined {
  return ruleOf(rules, method, path)?.Actions.find((action) => action.Type === 'forward')?.TargetGroupArn?.Ref;
}

/** A function's environment variables as the template gives them. */
const environmentOf = (fn: CfnResource | undefined) =>
  (fn?.Properties.Environment as { Variables: Record<string, unknown> } | undefined)?.Variables ?? {};

/** A request path for a resource template: each `{param}` a value such as a client sends. */
const samplePath = (resource: string) => resource.replace(/\{[^}]+\}/g, 'Xy7-abc_1');

const loadBalancerStack = synth({ frontDoor: 'load-balancer', ...DOMAIN });
const loadBalancerRecords = loadBalancerStack.ofType('AWS::Route53::RecordSet');

describe('the load balancer front door', () => {
  const { stack, resources, ofType, logicalId, groupFunction } = loadBalancerStack;
  const loadBalancer = stack.controller.loadBalancer;
  const rules = ofType('AWS::ElasticLoadBalancingV2::ListenerRule').map(
    ([, rule]) => rule.Properties as unknown as ListenerRule,
  );
  const targetGroupIdOf = (group: OperationGroup) => {
    const targetGroup = loadBalancer?.targetGroups.get(group);
    if (!targetGroup) throw new Error(`no target group for ${group}`);
    return logicalId(targetGroup);
  };

  it("sends a browser's preflight (OPTIONS) at every route's path to a function, which answers it", () => {
    const functionTargets = new Set(operationGroupsOf(ROUTES).map(targetGroupIdOf));
    for (const route of ROUTES) {
      for (const { resource } of resourcesOf(route)) {
        const target = routedTo(rules, 'OPTIONS', samplePath(resource));
        expect(target !== undefined && functionTargets.has(target), `OPTIONS ${resource}`).toBe(true);
      }
    }
  });

  it('is one internet-facing load balancer in two public subnets of a VPC without NAT gateways', () => {
    const [only, ...others] = ofType('AWS::ElasticLoadBalancingV2::LoadBalancer');
    expect(others).toEqual([]);
    expect(only?.[1].Properties).toMatchObject({ Scheme: 'internet-facing', Type: 'application' });
    expect(only?.[1].Properties.Subnets).toHaveLength(2);
    const subnets = ofType('AWS::EC2::Subnet');
    expect(subnets).toHaveLength(2);
    expect(subnets.every(([, subnet]) => subnet.Properties.MapPublicIpOnLaunch === true)).toBe(true);
    expect(ofType('AWS::EC2::NatGateway')).toEqual([]);
  });

  it('has a 60-second idle timeout above the functions timeout, deletion protection in prod and drops invalid headers', () => {
    const [[, alb] = []] = ofType('AWS::ElasticLoadBalancingV2::LoadBalancer');
    const attributes = Object.fromEntries(
      ((alb?.Properties.LoadBalancerAttributes ?? []) as { Key: string; Value: string }[]).map(({ Key, Value }) => [
        Key,
        Value,
      ]),
    );
    expect(attributes).toMatchObject({
      'idle_timeout.timeout_seconds': '60',
      'deletion_protection.enabled': 'true',
      'routing.http.drop_invalid_header_fields.enabled': 'true',
    });
    for (const group of operationGroupsOf(ROUTES)) {
      const timeout = resources[logicalId(groupFunction(group))]?.Properties.Timeout as number;
      expect(timeout, group).toBeLessThan(60);
    }
  });

  it('listens on 443 only, with the server certificate, TLS 1.2 and 1.3 and mutual TLS in passthrough mode', () => {
    const listeners = ofType('AWS::ElasticLoadBalancingV2::Listener');
    expect(listeners).toHaveLength(1);
    const listener = listeners[0]![1].Properties;
    expect(listener).toMatchObject({
      Port: 443,
      Protocol: 'HTTPS',
      SslPolicy: 'ELBSecurityPolicy-TLS13-1-2-2021-06',
      MutualAuthentication: { Mode: 'passthrough' },
      Certificates: [
        { CertificateArn: { 'Fn::GetAtt': [logicalId(stack.controller.bootstrap.run), 'ServerCertificateArn'] } },
      ],
    });
    expect(listener.MutualAuthentication).not.toHaveProperty('TrustStoreArn');
  });

  it('answers a path no rule matches with 404 in the envelope, without invoking a function', () => {
    const listener = ofType('AWS::ElasticLoadBalancingV2::Listener')[0]![1].Properties;
    expect(listener.DefaultActions).toEqual([
      {
        Type: 'fixed-response',
        FixedResponseConfig: { StatusCode: '404', ContentType: 'application/json', MessageBody: notFoundBody() },
      },
    ]);
    expect(JSON.parse(notFoundBody())).toMatchObject({ error: { code: 'NOT_FOUND' } });
    expect(routedTo(rules, 'GET', '/edge/management/v1/no-such-thing')).toBeUndefined();
    expect(routedTo(rules, 'GET', '/no-such-thing')).toBeUndefined();
  });

  it('has one Lambda target group per operation group, targeting its live alias with multi-value headers', () => {
    const groups = operationGroupsOf(ROUTES);
    expect(ofType('AWS::ElasticLoadBalancingV2::TargetGroup')).toHaveLength(groups.length);
    for (const group of groups) {
      const targetGroup = resources[targetGroupIdOf(group)]?.Properties;
      expect(targetGroup, group).toMatchObject({
        TargetType: 'lambda',
        Targets: [{ Id: { Ref: logicalId(groupFunction(group).live) } }],
        TargetGroupAttributes: expect.arrayContaining([{ Key: 'lambda.multi_value_headers.enabled', Value: 'true' }]),
      });
    }
  });

  it('lets the load balancer invoke each alias only through its own target group, before the group registers it', () => {
    const permissions = ofType('AWS::Lambda::Permission')
      .map(([id, permission]) => [id, permission.Properties] as const)
      .filter(([, permission]) => permission.Principal === 'elasticloadbalancing.amazonaws.com');
    const names = new Set<string>();
    for (const group of operationGroupsOf(ROUTES)) {
      const aliasId = logicalId(groupFunction(group).live);
      const permission = permissions.find(([, each]) => (each.FunctionName as { Ref?: string }).Ref === aliasId);
      expect(permission?.[1], group).toMatchObject({
        Action: 'lambda:InvokeFunction',
        SourceAccount: { Ref: 'AWS::AccountId' },
      });
      const name = resources[targetGroupIdOf(group)]?.Properties.Name as string;
      expect(name.length, name).toBeLessThanOrEqual(MAX_TARGET_GROUP_NAME);
      expect(name, group).toMatch(/^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/);
      names.add(name);
      // arn:<partition>:elasticloadbalancing:<region>:<account>:targetgroup/<name>/* — this group's, whatever its id.
      const sourceArn = permission?.[1].SourceArn as { 'Fn::Join': [string, unknown[]] };
      const parts = sourceArn['Fn::Join'][1];
      expect(parts, group).toEqual(
        expect.arrayContaining([{ Ref: 'AWS::Region' }, { Ref: 'AWS::AccountId' }, `:targetgroup/${name}/*`]),
      );
      expect(resources[targetGroupIdOf(group)]?.DependsOn, group).toContain(permission?.[0]);
    }
    expect(names.size).toBe(operationGroupsOf(ROUTES).length);
    expect(ofType('AWS::Lambda::Permission').map(([, each]) => each.Properties.Principal)).not.toContain(
      'apigateway.amazonaws.com',
    );
  });

  it("names each target group after its group, the same at every synth and unlike another stack's", () => {
    const owner = 'ZitiController-prod/ZitiController-prod/LoadBalancer';
    expect(targetGroupNameOf(owner, 'posture-checks')).toBe(targetGroupNameOf(owner, 'posture-checks'));
    expect(targetGroupNameOf(owner, 'posture-checks')).toMatch(/^ziti-posture-checks-[0-9a-f]{8}$/);
    expect(targetGroupNameOf('ZitiController-dev/ZitiController-dev/LoadBalancer', 'posture-checks')).not.toBe(
      targetGroupNameOf(owner, 'posture-checks'),
    );
  });

  it("routes every route of the route table, at every path it is served at, to its group's target group", () => {
    for (const route of ROUTES) {
      for (const { resource } of resourcesOf(route)) {
        const path = samplePath(resource);
        expect(routedTo(rules, route.method, path), `${route.method} ${path}`).toBe(targetGroupIdOf(route.group));
      }
    }
  });

  it("takes a fleet's requests by its first rules, within the ten a load balancer evaluates free, as the bill counts", () => {
    const fleet: [HttpMethod, string, OperationGroup][] = [
      ['GET', '/current-api-session/service-updates', 'poll'],
      ['GET', '/current-api-session', 'poll'],
      ['POST', '/sessions', 'sessions'],
      ['GET', '/services', 'client'],
      ['POST', '/authenticate', 'authentication'],
    ];
    expect(FLEET_ASSUMPTIONS.rulesPerRequest).toBeLessThanOrEqual(FLEET_PRICES.alb.lcu.freeRules);
    for (const [method, path, group] of fleet) {
      for (const fullPath of [`/edge/client/v1${path}`, path]) {
        const rule = ruleOf(rules, method, fullPath);
        expect(routedTo(rules, method, fullPath), `${method} ${fullPath}`).toBe(targetGroupIdOf(group));
        expect(rule?.Priority, `${method} ${fullPath}`).toBeLessThanOrEqual(FLEET_ASSUMPTIONS.rulesPerRequest);
      }
    }
    // The poll, a minute from every device, first of all, and the refresh by the same rule: no method condition.
    expect(ruleOf(rules, 'GET', '/edge/client/v1/current-api-session/service-updates')?.Priority).toBe(1);
    expect(ruleOf(rules, 'GET', '/edge/client/v1/current-api-session')?.Priority).toBe(1);
  });

  it("keeps within the load balancer's limits on rules and condition values", () => {
    expect(rules.length).toBeLessThanOrEqual(LISTENER_RULE_LIMITS.rulesPerLoadBalancer);
    expect(new Set(rules.map((rule) => rule.Priority)).size).toBe(rules.length);
    for (const rule of rules) {
      const values = rule.Conditions.map(
        (condition) => (condition.PathPatternConfig ?? condition.HttpRequestMethodConfig)?.Values.length ?? 0,
      );
      expect(Math.max(...values)).toBeLessThanOrEqual(LISTENER_RULE_LIMITS.valuesPerCondition);
      expect(values.reduce((sum, count) => sum + count, 0)).toBeLessThanOrEqual(LISTENER_RULE_LIMITS.valuesPerRule);
      for (const pattern of rule.Conditions.flatMap((condition) => condition.PathPatternConfig?.Values ?? [])) {
        expect(pattern.length, pattern).toBeLessThanOrEqual(128);
      }
    }
  });

  it('guards the load balancer with the web ACL, whose login rule matches the raw paths it sees', () => {
    const associations = ofType('AWS::WAFv2::WebACLAssociation');
    expect(associations.map(([, each]) => each.Properties.ResourceArn)).toEqual([
      { Ref: logicalId(loadBalancer!.loadBalancer) },
    ]);
    const login = new RegExp(LOGIN_PATH_PATTERN);
    for (const path of ['/authenticate', '/edge/client/v1/authenticate', '/edge/client/v1/enroll/ott', '/enroll']) {
      expect(login.test(path), path).toBe(true);
    }
    expect(login.test('/edge/client/v1/services')).toBe(false);
  });

  it('makes no REST API, no API Gateway domain and no truststore', () => {
    expect(stack.controller.api).toBeUndefined();
    expect(stack.controller.mtls).toBeUndefined();
    for (const type of ['AWS::ApiGateway::RestApi', 'AWS::ApiGateway::DomainName', 'AWS::S3::Bucket']) {
      expect(ofType(type), type).toEqual([]);
    }
  });

  it('tells every group function it sits behind the load balancer, at one address', () => {
    for (const group of operationGroupsOf(ROUTES)) {
      const variables = environmentOf(resources[logicalId(groupFunction(group))]);
      expect(variables, group).toMatchObject({ FRONT_DOOR: 'alb', PUBLIC_BASE_URL: 'https://ziti.example.com' });
      expect(variables, group).not.toHaveProperty('MTLS_BASE_URL');
      expect(variables, group).not.toHaveProperty('SDK_BASE_URL');
    }
  });

  it("forwards the client's certificate under a header of the stack's own, the one every function reads", () => {
    const [[, listener] = []] = ofType('AWS::ElasticLoadBalancingV2::Listener');
    const attributes = listener?.Properties.ListenerAttributes as { Key: string; Value: unknown }[];
    const renamed = attributes.find((attribute) => attribute.Key === CLIENT_CERT_HEADER_ATTRIBUTE)?.Value;
    // x-ziti-client-cert- and the UUID CloudFormation gave the stack: nothing a client can know or guess.
    expect(JSON.stringify(renamed)).toMatch(/x-ziti-client-cert-.*AWS::StackId/);
    for (const group of operationGroupsOf(ROUTES)) {
      expect(environmentOf(resources[logicalId(groupFunction(group))]).ALB_CLIENT_CERT_HEADER, group).toEqual(renamed);
    }
  });

  it("points the domain at the load balancer and gives its DNS name as the domain's target", () => {
    const [[, record] = []] = ofType('AWS::Route53::RecordSet');
    expect(record?.Properties).toMatchObject({ Name: 'ziti.example.com.', Type: 'A' });
    const outputs = (Template.fromStack(stack).toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs;
    expect(outputs.DomainTarget?.Value).toEqual({
      'Fn::GetAtt': [logicalId(loadBalancer!.loadBalancer), 'DNSName'],
    });
    expect(outputs.ClientApiUrl?.Value).toBe('https://ziti.example.com/edge/client/v1');
  });

  it("alarms on the load balancer's 5xx, rejected connections and Lambda target errors", () => {
    const albId = logicalId(loadBalancer!.loadBalancer);
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties);
    const named = (suffix: string) => alarms.find((alarm) => String(alarm.AlarmName).endsWith(suffix));
    const metricNames = (alarm: Record<string, unknown> | undefined) =>
      JSON.stringify(alarm?.Metrics ?? alarm?.MetricName);
    expect(metricNames(named('-api-5xx'))).toContain('HTTPCode_ELB_5XX_Count');
    expect(metricNames(named('-api-5xx'))).toContain('HTTPCode_Target_5XX_Count');
    expect(named('-load-balancer-rejected-connections')?.MetricName).toBe('RejectedConnectionCount');
    expect(metricNames(named('-load-balancer-target-errors'))).toContain('LambdaUserError');
    expect(metricNames(named('-load-balancer-target-errors'))).toContain('LambdaInternalError');
    for (const suffix of ['-api-5xx', '-load-balancer-rejected-connections', '-load-balancer-target-errors']) {
      expect(JSON.stringify(named(suffix)), suffix).toContain(albId);
    }
  });
});

describe('the REST API front door', () => {
  const { stack, ofType, resources, logicalId, groupFunction } = synth({ ...DOMAIN });

  it('stays the default: a REST API behind the web ACL, no load balancer, FRONT_DOOR=rest-api', () => {
    expect(stack.controller.loadBalancer).toBeUndefined();
    expect(ofType('AWS::ApiGateway::RestApi')).toHaveLength(1);
    expect(ofType('AWS::ElasticLoadBalancingV2::LoadBalancer')).toEqual([]);
    expect(ofType('AWS::EC2::VPC')).toEqual([]);
    const stageId = logicalId(stack.controller.api!.restApi.deploymentStage);
    expect(ofType('AWS::WAFv2::WebACLAssociation').map(([, each]) => each.Properties.ResourceArn)).toEqual([
      expect.objectContaining({ 'Fn::Join': expect.arrayContaining([expect.arrayContaining([{ Ref: stageId }])]) }),
    ]);
    for (const group of operationGroupsOf(ROUTES)) {
      const variables = environmentOf(resources[logicalId(groupFunction(group))]);
      expect(variables.FRONT_DOOR, group).toBe('rest-api');
    }
  });

  it("names the domain's alias record as the load balancer's, so that a change of front door updates it in place", () => {
    const restApiRecords = ofType('AWS::Route53::RecordSet').map(([id]) => id);
    expect(restApiRecords).toHaveLength(1);
    expect(loadBalancerRecords.map(([id]) => id)).toEqual(restApiRecords);
  });
});

describe('ControllerLoadBalancer', () => {
  const certificateArn = 'arn:aws:acm:eu-west-1:123456789012:certificate/abc';
  const standalone = () => {
    const stack = new Stack(new App(), 'Standalone');
    const fn = new LambdaFunction(stack, 'Info', {
      runtime: Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: Code.fromInline('export const handler = async () => {};'),
    });
    new ControllerLoadBalancer(stack, 'LoadBalancer', {
      routes: ROUTES.filter((route) => route.group === 'info'),
      functions: new Map([['info', fn]]),
      certificate: Certificate.fromCertificateArn(stack, 'Certificate', certificateArn),
      domainName: 'ziti.example.com',
      deletionProtection: false,
      clientCertificateHeader: 'x-ziti-client-cert-0123456789abcdef0123456789abcdef',
      vpc: new Vpc(stack, 'OwnVpc', { natGateways: 0, maxAzs: 2 }),
    });
    return Template.fromStack(stack);
  };

  it('leaves deletion protection off outside production', () => {
    const template = standalone();
    expect(JSON.stringify(template.findResources('AWS::ElasticLoadBalancingV2::LoadBalancer'))).toContain(
      '"Key":"deletion_protection.enabled","Value":"false"',
    );
  });
});

describe('frontDoor setting', () => {
  /** Only `managementOnly`: the settings read without the domains SDKs need (refused otherwise). */
  const managementOnly = (key: string) => (key === 'managementOnly' ? 'true' : undefined);

  it('is read from context or ZITI_FRONT_DOOR, and refuses anything but the two front doors', () => {
    const context = (key: string) => ({ frontDoor: 'load-balancer', domainName: 'ziti.example.com' })[key];
    expect(resolveControllerSettings(context, {}).frontDoor).toBe('load-balancer');
    expect(
      resolveControllerSettings(managementOnly, { ZITI_FRONT_DOOR: 'rest-api', ZITI_DOMAIN_NAME: 'ziti.example.com' })
        .frontDoor,
    ).toBe('rest-api');
    expect(resolveControllerSettings(managementOnly, {}).frontDoor).toBeUndefined();
    expect(() => resolveControllerSettings(managementOnly, { ZITI_FRONT_DOOR: 'cloudfront' })).toThrow(
      /frontDoor must be one of load-balancer, rest-api/,
    );
  });

  it('needs the domain name for the load balancer, and refuses the REST API domains beside it', () => {
    const env = (more: Record<string, string>) => ({ ZITI_FRONT_DOOR: 'load-balancer', ...more });
    expect(() => resolveControllerSettings(managementOnly, env({}))).toThrow(/needs domainName/);
    expect(() =>
      resolveControllerSettings(
        managementOnly,
        env({
          ZITI_DOMAIN_NAME: 'ziti.example.com',
          ZITI_MTLS_DOMAIN_NAME: 'ziti-mtls.example.com',
          ZITI_HOSTED_ZONE_ID: 'Z0123456789ABCDEFGHIJ',
          ZITI_HOSTED_ZONE_NAME: 'example.com',
        }),
      ),
    ).toThrow(/mtlsDomainName is for the REST API/);
    expect(() => new ControllerStack(new App(), 'NoDomain', { frontDoor: 'load-balancer' })).toThrow(
      /needs domainName/,
    );
  });

  it('takes an existing VPC by id with two public subnets or more, for a load balancer only', () => {
    const base = { ZITI_FRONT_DOOR: 'load-balancer', ZITI_DOMAIN_NAME: 'ziti.example.com' };
    const vpc = { ZITI_VPC_ID: 'vpc-0123456789abcdef0', ZITI_PUBLIC_SUBNET_IDS: 'subnet-0123456a, subnet-0123456b' };
    expect(resolveControllerSettings(managementOnly, { ...base, ...vpc })).toMatchObject({
      vpcId: 'vpc-0123456789abcdef0',
      publicSubnetIds: ['subnet-0123456a', 'subnet-0123456b'],
    });
    expect(() =>
      resolveControllerSettings(managementOnly, { ...base, ...vpc, ZITI_PUBLIC_SUBNET_IDS: 'subnet-0123456a' }),
    ).toThrow(/two or more subnet ids/);
    expect(() => resolveControllerSettings(managementOnly, vpc)).toThrow(
      /for frontDoor load-balancer or routerEndpoint/,
    );
  });

  it("takes it for the routers' endpoint too, whichever front door", () => {
    const vpc = { ZITI_VPC_ID: 'vpc-0123456789abcdef0', ZITI_PUBLIC_SUBNET_IDS: 'subnet-0123456a, subnet-0123456b' };
    expect(resolveControllerSettings(managementOnly, { ...vpc, ZITI_ROUTER_ENDPOINT: 'true' })).toMatchObject({
      routerEndpoint: true,
      vpcId: 'vpc-0123456789abcdef0',
    });
  });
});
