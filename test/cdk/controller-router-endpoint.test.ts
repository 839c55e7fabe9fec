import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CTRL_PORT, DEFAULT_CTRL_RELAY_PORT } from '#ctrl-channel/ctrl-port.ts';
import { ROUTER_DATA_MODEL_TOO_LARGE } from '#ctrl-channel/router-data-model.ts';
import { alarmCount } from '../../bench/fleet-bill.ts';
import { ROUTER_DATA_MODEL_TOO_LARGE_PATTERN } from '../../cdk/controller-monitoring.ts';
import { ControllerStack, type ControllerStackProps } from '../../cdk/controller-stack.ts';
import { tableActionsOf } from '../../cdk/operation-groups.ts';
import { DEFAULT_ROUTER_ENDPOINT, routerEndpointProblem } from '../../cdk/router-endpoint-settings.ts';
import { cdkJsonContext } from './synth-context.ts';

interface CfnResource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
}

interface PolicyStatementJson {
  readonly Action: string | string[];
  readonly Resource: unknown;
}

function synth(props: Partial<ControllerStackProps> = {}) {
  // Bundling skipped, as in every CDK test: the image's asset is then the Dockerfile alone, and no Docker runs.
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new ControllerStack(app, 'RouterEndpointController', { adminUsername: 'admin', ...props });
  const template = Template.fromStack(stack);
  const resources = (template.toJSON() as { Resources: Record<string, CfnResource> }).Resources;
  const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);
  return { stack, template, resources, ofType };
}

const ON = { routerEndpoint: true } as const;

/** The statements of the policies attached to the role whose logical id is `roleId`. */
function statementsOf(resources: Record<string, CfnResource>, roleId: string): PolicyStatementJson[] {
  return Object.values(resources)
    .filter(
      (resource) =>
        resource.Type === 'AWS::IAM::Policy' &&
        (resource.Properties.Roles as { Ref: string }[]).some((role) => role.Ref === roleId),
    )
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: PolicyStatementJson[] }).Statement);
}

const actionsOf = (statement: PolicyStatementJson) =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];

// Each test synthesizes a whole stack (the first also loads the CDK): seconds alone, a minute on a loaded 2-core machine.
describe("the routers' control channel endpoint", { timeout: 120_000 }, () => {
  it('is not deployed unless routerEndpoint is on, and the functions name no control channel address', () => {
    const { ofType, stack } = synth();
    expect(ofType('AWS::ElasticLoadBalancingV2::LoadBalancer')).toEqual([]);
    expect(ofType('AWS::ECS::Service')).toEqual([]);
    expect(ofType('AWS::ECS::TaskDefinition')).toEqual([]);
    expect(stack.controller.routerEndpoint).toBeUndefined();
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      const variables = (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables;
      expect(variables?.CTRL_ADDRESS).toBeUndefined();
    }
  });

  it('puts a Network Load Balancer, cross-zone, with a TCP listener on the port in front of the Fargate service', () => {
    const { template, stack } = synth(ON);
    template.resourceCountIs('AWS::ElasticLoadBalancingV2::LoadBalancer', 1);
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', {
      Type: 'network',
      Scheme: 'internet-facing',
      LoadBalancerAttributes: Match.arrayWith([{ Key: 'load_balancing.cross_zone.enabled', Value: 'true' }]),
    });
    // TCP, not TLS: the load balancer passes the handshake through, so the router's certificate and ALPN reach the task.
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', {
      Port: DEFAULT_ROUTER_ENDPOINT.port,
      Protocol: 'TCP',
    });
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
      Port: DEFAULT_CTRL_PORT,
      Protocol: 'TCP',
      TargetType: 'ip',
      HealthCheckProtocol: 'TCP',
    });
    const endpoint = stack.controller.routerEndpoint!;
    const targetGroupId = stack.getLogicalId(endpoint.targetGroup.node.defaultChild as never);
    // Started once the bootstrap has built the CA and issued the certificate the tasks serve.
    const bootstrapRun = stack.getLogicalId(stack.controller.bootstrap.run.node.defaultChild as never);
    template.hasResource('AWS::ECS::Service', { DependsOn: Match.arrayWith([bootstrapRun]) });
    template.hasResourceProperties('AWS::ECS::Service', {
      LaunchType: 'FARGATE',
      DesiredCount: DEFAULT_ROUTER_ENDPOINT.desiredCount,
      LoadBalancers: [
        { ContainerName: 'Endpoint', ContainerPort: DEFAULT_CTRL_PORT, TargetGroupArn: { Ref: targetGroupId } },
      ],
    });
  });

  it('sizes the tasks and their scaling by the settings, scaling on CPU', () => {
    const { template } = synth({
      ...ON,
      routerEndpointCpu: 512,
      routerEndpointMemoryMb: 2048,
      routerEndpointDesiredCount: 3,
      routerEndpointMinCount: 2,
      routerEndpointMaxCount: 6,
    });
    template.hasResourceProperties('AWS::ECS::TaskDefinition', {
      Cpu: '512',
      Memory: '2048',
      RequiresCompatibilities: ['FARGATE'],
      RuntimePlatform: { CpuArchitecture: 'ARM64', OperatingSystemFamily: 'LINUX' },
    });
    template.hasResourceProperties('AWS::ECS::Service', { DesiredCount: 3 });
    template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      MinCapacity: 2,
      MaxCapacity: 6,
      ScalableDimension: 'ecs:service:DesiredCount',
    });
    template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      PolicyType: 'TargetTrackingScaling',
      TargetTrackingScalingPolicyConfiguration: Match.objectLike({
        PredefinedMetricSpecification: { PredefinedMetricType: 'ECSServiceAverageCPUUtilization' },
        TargetValue: DEFAULT_ROUTER_ENDPOINT.targetCpuPercent,
      }),
    });
  });

  it("gives the task role exactly the endpoint's table actions and read access to the server key", () => {
    const { template, resources, stack } = synth(ON);
    const taskDefinition = Object.values(resources).find((resource) => resource.Type === 'AWS::ECS::TaskDefinition')!;
    const roleId = (taskDefinition.Properties.TaskRoleArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const statements = statementsOf(resources, roleId);
    const tableId = stack.getLogicalId(stack.controller.table.node.defaultChild as never);
    const onTable = statements.filter((statement) => JSON.stringify(statement.Resource).includes(tableId));
    expect(onTable.flatMap(actionsOf).sort()).toEqual([...tableActionsOf('router-endpoint')].sort());
    expect(onTable.flatMap(actionsOf)).not.toContain('dynamodb:Scan');

    const serverKeyId = stack.getLogicalId(stack.controller.keys.serverKey);
    const onSecret = statements.filter((statement) => JSON.stringify(statement.Resource).includes(serverKeyId));
    expect(onSecret.flatMap(actionsOf).sort()).toEqual([
      'secretsmanager:DescribeSecret',
      'secretsmanager:GetSecretValue',
    ]);
    const encryptionId = stack.getLogicalId(stack.controller.keys.serverKeyEncryption.node.defaultChild as never);
    const onEncryption = statements.filter((statement) => JSON.stringify(statement.Resource).includes(encryptionId));
    expect(onEncryption.flatMap(actionsOf)).toEqual(['kms:Decrypt']);
    // No CA key: the endpoint signs nothing.
    expect(statements.flatMap(actionsOf)).not.toContain('kms:Sign');
    const container = (taskDefinition.Properties.ContainerDefinitions as { Environment: { Name: string }[] }[])[0]!;
    expect(container.Environment.map((variable) => variable.Name)).toContain('SERVER_KEY_SECRET_ARN');
    template.resourceCountIs('AWS::ECS::TaskDefinition', 1);
  });

  it('lets the port in from anywhere to the load balancer, the endpoint port from it to the tasks, the relay port from the tasks alone', () => {
    const { ofType } = synth({ ...ON, routerEndpointPort: 6262 });
    const groups = ofType('AWS::EC2::SecurityGroup').filter(([id]) => id.includes('RouterEndpoint'));
    const ingress = groups.flatMap(([, group]) => (group.Properties.SecurityGroupIngress as unknown[]) ?? []);
    expect(ingress).toEqual([
      expect.objectContaining({ CidrIp: '0.0.0.0/0', IpProtocol: 'tcp', FromPort: 6262, ToPort: 6262 }),
    ]);
    const taskIngress = ofType('AWS::EC2::SecurityGroupIngress').map(([, rule]) => rule.Properties);
    const [taskGroupId] = groups.find(([id]) => id.includes('TaskSecurityGroup'))!;
    const [loadBalancerGroupId] = groups.find(([id]) => id.includes('LoadBalancerSecurityGroup'))!;
    const sourceOf = (rule: Record<string, unknown>) =>
      (rule.SourceSecurityGroupId as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
    expect(taskIngress).toHaveLength(2);
    const endpointRule = taskIngress.find((rule) => rule.FromPort === DEFAULT_CTRL_PORT)!;
    expect(endpointRule).toMatchObject({ IpProtocol: 'tcp', ToPort: DEFAULT_CTRL_PORT });
    expect(sourceOf(endpointRule)).toBe(loadBalancerGroupId);
    const relayRule = taskIngress.find((rule) => rule.FromPort === DEFAULT_CTRL_RELAY_PORT)!;
    expect(relayRule).toMatchObject({ IpProtocol: 'tcp', ToPort: DEFAULT_CTRL_RELAY_PORT });
    expect(sourceOf(relayRule)).toBe(taskGroupId);
    expect(relayRule.GroupId).toEqual({ 'Fn::GetAtt': [taskGroupId, 'GroupId'] });
  });

  it("alarms when no task is healthy, when a task stays unhealthy, on high task CPU, and on a router's data model too large, counted from the endpoint's log", () => {
    const { ofType } = synth(ON);
    const names = ofType('AWS::CloudWatch::Alarm').map(([, alarm]) => String(alarm.Properties.AlarmName));
    expect(names).toEqual(
      expect.arrayContaining([
        'RouterEndpointController-router-endpoint-no-healthy-targets',
        'RouterEndpointController-router-endpoint-unhealthy-tasks',
        'RouterEndpointController-router-endpoint-cpu',
        'RouterEndpointController-router-data-model-too-large',
      ]),
    );
    const tooLarge = ofType('AWS::Logs::MetricFilter')
      .map(([, filter]) => filter.Properties)
      .filter((filter) => filter.FilterPattern === ROUTER_DATA_MODEL_TOO_LARGE_PATTERN);
    expect(tooLarge).toHaveLength(1);
    expect(tooLarge[0]!.MetricTransformations).toEqual([
      {
        MetricNamespace: 'ZitiController/RouterEndpointController',
        MetricName: 'RouterDataModelTooLarge',
        MetricValue: '1',
      },
    ]);
    // The pattern matches the warning the endpoint writes, whatever it left out.
    expect(ROUTER_DATA_MODEL_TOO_LARGE_PATTERN).toContain(`"${ROUTER_DATA_MODEL_TOO_LARGE}*"`);
    // As many as the bill counts.
    expect(names).toHaveLength(alarmCount({ frontDoor: 'rest', firewall: true, routerEndpoint: { routers: 1 } }));
    expect(
      synth()
        .ofType('AWS::CloudWatch::Alarm')
        .map(([, alarm]) => String(alarm.Properties.AlarmName)),
    ).not.toEqual(expect.arrayContaining([expect.stringContaining('router-endpoint')]));
  });

  it("gives every function the load balancer's address as CTRL_ADDRESS, and names it in the server certificate", () => {
    const { ofType, stack } = synth(ON);
    const dnsName = stack.resolve(stack.controller.routerEndpoint!.loadBalancer.loadBalancerDnsName);
    const expected = { 'Fn::Join': ['', ['tls:', dnsName, `:${DEFAULT_ROUTER_ENDPOINT.port}`]] };
    const functions = ofType('AWS::Lambda::Function').filter(
      ([id]) => id.includes('Function') && !id.includes('Bootstrap'),
    );
    const groups = [...stack.controller.functions.values()].map((fn) =>
      stack.getLogicalId(fn.node.defaultChild as never),
    );
    for (const id of groups) {
      const fn = functions.find(([each]) => each === id)!;
      expect((fn[1].Properties.Environment as { Variables: Record<string, unknown> }).Variables.CTRL_ADDRESS).toEqual(
        expected,
      );
    }
    const bootstrapId = stack.getLogicalId(stack.controller.bootstrap.function.node.defaultChild as never);
    const bootstrap = ofType('AWS::Lambda::Function').find(([id]) => id === bootstrapId)!;
    expect(
      JSON.stringify(
        (bootstrap[1].Properties.Environment as { Variables: Record<string, unknown> }).Variables.SERVER_NAMES,
      ),
    ).toContain(JSON.stringify(dnsName));
  });

  it('names ctrlDomainName instead, with its own alias record to the load balancer', () => {
    const { template, stack, resources } = synth({
      ...ON,
      ctrlDomainName: 'ctrl.example.com',
      routerEndpointPort: 6262,
      hostedZoneId: 'Z0123456789ABCDEFGHIJ',
      hostedZoneName: 'example.com',
      domainName: 'ziti.example.com',
    });
    for (const fn of stack.controller.functions.values()) {
      const { Ref: id } = stack.resolve(fn.functionName) as { Ref: string };
      const variables = (resources[id]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables.CTRL_ADDRESS).toBe('tls:ctrl.example.com:6262');
    }
    template.hasResourceProperties('AWS::Route53::RecordSet', { Name: 'ctrl.example.com.', Type: 'A' });
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', { Port: 6262, Protocol: 'TCP' });
  });

  it('shares one VPC with the load balancer front door when the deployment gives none', () => {
    const { ofType, stack } = synth({ ...ON, frontDoor: 'load-balancer', domainName: 'ziti.example.com' });
    const vpcs = ofType('AWS::EC2::VPC');
    expect(vpcs).toHaveLength(1);
    const { controller } = stack;
    expect(controller.routerEndpoint!.vpc).toBe(controller.loadBalancer!.vpc);
    const subnetsOf = (loadBalancer: CfnResource) => JSON.stringify(loadBalancer.Properties.Subnets);
    const [application, network] = ['application', 'network'].map(
      (type) => ofType('AWS::ElasticLoadBalancingV2::LoadBalancer').find(([, each]) => each.Properties.Type === type)!,
    );
    expect(subnetsOf(application![1])).toBe(subnetsOf(network![1]));
  });

  it("puts both load balancers in the deployment's VPC when given one, making none, and refuses one unused", () => {
    const subnets = ['subnet-0123456a', 'subnet-0123456b'];
    const { ofType } = synth({
      ...ON,
      frontDoor: 'load-balancer',
      domainName: 'ziti.example.com',
      vpcId: 'vpc-0123456789abcdef0',
      publicSubnetIds: subnets,
    });
    expect(ofType('AWS::EC2::VPC')).toEqual([]);
    const loadBalancers = ofType('AWS::ElasticLoadBalancingV2::LoadBalancer');
    expect(loadBalancers.map(([, each]) => each.Properties.Type).sort()).toEqual(['application', 'network']);
    for (const [, each] of loadBalancers) expect(each.Properties.Subnets).toEqual(subnets);
    // Neither load balancer deployed: a VPC given is refused rather than ignored.
    expect(() => synth({ vpcId: 'vpc-0123456789abcdef0', publicSubnetIds: subnets })).toThrow(
      /vpc and vpcSubnets are for frontDoor load-balancer or routerEndpoint/,
    );
  });

  it('refuses settings that make no working service', () => {
    expect(routerEndpointProblem({ routerEndpointCpu: 512 })).toMatch(/needs routerEndpoint: true/);
    expect(routerEndpointProblem({ routerEndpoint: true, routerEndpointCpu: 300 })).toMatch(/routerEndpointCpu/);
    expect(routerEndpointProblem({ routerEndpoint: true, routerEndpointMemoryMb: 8192 })).toMatch(/MemoryMb/);
    expect(routerEndpointProblem({ routerEndpoint: true, routerEndpointMinCount: 3 })).toMatch(/min <= desired/);
    expect(routerEndpointProblem({ routerEndpoint: true, ctrlDomainName: 'Not A Name' })).toMatch(/ctrlDomainName/);
    expect(routerEndpointProblem({ routerEndpoint: true })).toBeUndefined();
    expect(() => synth({ routerEndpointPort: 6262 })).toThrow(/needs routerEndpoint: true/);
  });
});
