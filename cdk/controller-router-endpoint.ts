import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type IVpc, Peer, Port, SecurityGroup, type SubnetSelection, SubnetType } from 'aws-cdk-lib/aws-ec2';
import {
  Cluster,
  ContainerInsights,
  CpuArchitecture,
  FargateService,
  FargateTaskDefinition,
  LogDrivers,
  OperatingSystemFamily,
} from 'aws-cdk-lib/aws-ecs';
import { NetworkLoadBalancer, type NetworkTargetGroup, Protocol } from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { DEFAULT_CTRL_PORT, DEFAULT_CTRL_RELAY_PORT } from '#ctrl-channel/ctrl-port.ts';
import { type BuildStamp, buildStampDefine } from './build-stamp.ts';
import { type FunctionLogOptions, functionLogGroup, powertoolsEnvironment } from './controller-function.ts';
import type { ControllerKeys } from './controller-keys.ts';
import { grantTableData } from './controller-table.ts';
import { tableActionsOf } from './operation-groups.ts';
import { routerEndpointImage } from './router-endpoint-image.ts';
import { DEFAULT_ROUTER_ENDPOINT, type RouterEndpointSizing } from './router-endpoint-settings.ts';

export interface ControllerRouterEndpointProps {
  readonly table: ITable;
  readonly keys: ControllerKeys;
  readonly sizing: RouterEndpointSizing;
  /** The name routers dial; unset, the load balancer's DNS name. */
  readonly ctrlDomainName?: string;
  readonly buildStamp: BuildStamp;
  readonly logs?: FunctionLogOptions;
  readonly deletionProtection: boolean;
  /** The VPC of the load balancer and the tasks, its public subnets (`vpcSubnets`, by default all) in two zones or more. */
  readonly vpc: IVpc;
  readonly vpcSubnets?: SubnetSelection;
}

/**
 * The routers' control channel on AWS: a channel is a TCP connection that lives for days, which no Lambda holds, so
 * it ends at an ECS Fargate service built from the same code (`ctrl-channel/main.ts`). A Network Load Balancer's TCP
 * listener passes TLS through untouched, so the router's client certificate and its ALPN (`ziti-ctrl`) reach the task,
 * which checks the certificate against the router's stored fingerprint. A router holds one task's connection; the
 * tasks agree through the table (each router's connection item and its lease), as the functions do.
 *
 * The tasks run in public subnets with public addresses (to pull their image and reach DynamoDB, KMS and Secrets
 * Manager with no NAT gateway), and take connections from the load balancer's security group alone.
 */
export class ControllerRouterEndpoint extends Construct {
  readonly vpc: IVpc;
  readonly loadBalancer: NetworkLoadBalancer;
  readonly targetGroup: NetworkTargetGroup;
  readonly service: FargateService;
  readonly logGroup: ILogGroup;
  /** The host routers dial: `ctrlDomainName`, or the load balancer's DNS name. */
  readonly host: string;
  /** What router enrollment JWTs name (`ctrls`) and the functions read (`CTRL_ADDRESS`): `tls:<host>:<port>`. */
  readonly ctrlAddress: string;

  constructor(scope: Construct, id: string, props: ControllerRouterEndpointProps) {
    super(scope, id);
    const { sizing } = props;
    this.vpc = props.vpc;
    const vpcSubnets = props.vpcSubnets ?? { subnetType: SubnetType.PUBLIC };

    const loadBalancerGroup = new SecurityGroup(this, 'LoadBalancerSecurityGroup', {
      vpc: this.vpc,
      description: 'Ziti controller router endpoint load balancer: the control channel port from anywhere',
      allowAllOutbound: false,
    });
    loadBalancerGroup.addIngressRule(Peer.anyIpv4(), Port.tcp(sizing.port), "Routers' control channels");
    Validations.of(loadBalancerGroup).acknowledge({
      id: 'AwsSolutions-EC23',
      reason:
        'Routers connect from any address; the endpoint admits only a certificate enrolled as a router, checked ' +
        'against its stored fingerprint.',
    });
    const taskGroup = new SecurityGroup(this, 'TaskSecurityGroup', {
      vpc: this.vpc,
      description: 'Ziti controller router endpoint tasks: the endpoint port from the load balancer only',
      // DynamoDB, KMS, Secrets Manager, ECR and CloudWatch Logs over HTTPS, through the internet gateway.
      allowAllOutbound: true,
    });
    taskGroup.addIngressRule(loadBalancerGroup, Port.tcp(DEFAULT_CTRL_PORT), 'Control channels and health checks');
    loadBalancerGroup.addEgressRule(taskGroup, Port.tcp(DEFAULT_CTRL_PORT), 'To the endpoint tasks');
    // A circuit across routers held by different tasks: each task relays the others' routers' messages (mesh design
    // step 9). Only the tasks reach the relay, and each refuses a peer without the controller's own key.
    taskGroup.addIngressRule(taskGroup, Port.tcp(DEFAULT_CTRL_RELAY_PORT), 'Relayed messages between endpoint tasks');

    this.loadBalancer = new NetworkLoadBalancer(this, 'LoadBalancer', {
      vpc: this.vpc,
      vpcSubnets,
      internetFacing: true,
      // A router may land in any zone whatever task is healthy: each node sends to every zone's tasks.
      crossZoneEnabled: true,
      securityGroups: [loadBalancerGroup],
      deletionProtection: props.deletionProtection,
    });
    Validations.of(this.loadBalancer).acknowledge({
      id: 'AwsSolutions-ELB2',
      reason:
        "A TCP listener's access logs hold only TLS listeners' fields; the endpoint logs each channel opened, " +
        'refused and closed with the router it belongs to.',
    });
    this.host = props.ctrlDomainName ?? this.loadBalancer.loadBalancerDnsName;
    this.ctrlAddress = `tls:${this.host}:${sizing.port}`;

    const taskDefinition = new FargateTaskDefinition(this, 'Task', {
      cpu: sizing.cpu,
      memoryLimitMiB: sizing.memoryMb,
      runtimePlatform: {
        cpuArchitecture: CpuArchitecture.ARM64,
        operatingSystemFamily: OperatingSystemFamily.LINUX,
      },
    });
    const taskRole = taskDefinition.taskRole;
    grantTableData(props.table, taskRole, tableActionsOf('router-endpoint'));
    // The server key, read as the signing functions read it: the endpoint's TLS is the controller's certificate.
    const keyEnvironment = props.keys.grantSigning(taskRole, ['server']);

    this.logGroup = functionLogGroup(this, 'Logs', props.logs);
    taskDefinition.addContainer('Endpoint', {
      image: routerEndpointImage(this, buildStampDefine(props.buildStamp)),
      logging: LogDrivers.awsLogs({ logGroup: this.logGroup, streamPrefix: 'endpoint' }),
      portMappings: [{ containerPort: DEFAULT_CTRL_PORT }, { containerPort: DEFAULT_CTRL_RELAY_PORT }],
      readonlyRootFilesystem: true,
      environment: {
        ...powertoolsEnvironment(this),
        AWS_REGION: Stack.of(this).region,
        TABLE_NAME: props.table.tableName,
        CTRL_PORT: String(DEFAULT_CTRL_PORT),
        CTRL_RELAY_PORT: String(DEFAULT_CTRL_RELAY_PORT),
        CTRL_SERVER_NAME: this.host,
        ...keyEnvironment,
      },
    });

    Validations.of(taskDefinition).acknowledge({
      id: 'AwsSolutions-ECS2',
      reason:
        'The environment holds names and ARNs only (the table, the server key secret, the host, the port); the ' +
        'server key itself is read from its secret at start, under the task role.',
    });
    if (taskDefinition.executionRole) {
      Validations.of(taskDefinition.executionRole).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          "The execution role's ecr:GetAuthorizationToken, which ECS needs to pull the image, takes no resource ARN; " +
          'its other grants name the image repository and the log group.',
      });
    }

    const cluster = new Cluster(this, 'Cluster', {
      vpc: this.vpc,
      containerInsightsV2: ContainerInsights.ENABLED,
    });
    this.service = new FargateService(this, 'Service', {
      cluster,
      taskDefinition,
      desiredCount: sizing.desiredCount,
      vpcSubnets,
      assignPublicIp: true,
      securityGroups: [taskGroup],
      // A deploy that brings no task up healthy is rolled back rather than left replacing tasks for ever.
      circuitBreaker: { rollback: true },
      // New tasks come up before old ones stop: routers on a stopped task reconnect to one that already serves.
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
    });
    const scaling = this.service.autoScaleTaskCount({ minCapacity: sizing.minCount, maxCapacity: sizing.maxCount });
    scaling.scaleOnCpuUtilization('Cpu', { targetUtilizationPercent: DEFAULT_ROUTER_ENDPOINT.targetCpuPercent });

    const listener = this.loadBalancer.addListener('Routers', { port: sizing.port, protocol: Protocol.TCP });
    this.targetGroup = listener.addTargets('Endpoint', {
      port: DEFAULT_CTRL_PORT,
      protocol: Protocol.TCP,
      targets: [this.service],
      // A TCP connect: the endpoint's TLS answers only a router's handshake.
      healthCheck: { protocol: Protocol.TCP, interval: Duration.seconds(10), healthyThresholdCount: 2 },
      // A stopping task's routers are closed by it (SIGTERM) and reconnect elsewhere; no need to wait long.
      deregistrationDelay: Duration.seconds(30),
    });
  }
}
