import { createHash } from 'node:crypto';
import { ArnFormat, Aws, CfnOutput, type CfnResource, Duration, Fn, Stack, Validations } from 'aws-cdk-lib';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import { type IVpc, Peer, Port, SecurityGroup, type SubnetSelection, SubnetType } from 'aws-cdk-lib/aws-ec2';
import {
  ApplicationListenerRule,
  ApplicationLoadBalancer,
  ApplicationProtocol,
  ApplicationTargetGroup,
  type CfnListener,
  type IApplicationLoadBalancerTarget,
  ListenerAction,
  ListenerCertificate,
  ListenerCondition,
  MutualAuthenticationMode,
  SslPolicy,
  TargetType,
} from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { ERROR_CODES } from '#shared/errors/error-codes.ts';
import { API_VERSION_META } from '#shared/http/envelope.ts';
import type { OperationGroup, Route } from '#shared/routes/route.ts';
import { type LoadBalancerRule, loadBalancerRules } from './load-balancer-rules.ts';
import { functionIdOf } from './operation-groups.ts';

export interface ControllerLoadBalancerProps {
  readonly routes: readonly Route[];
  /** What serves each operation group of `routes`: its function's `live` alias. */
  readonly functions: ReadonlyMap<OperationGroup, IFunction>;
  /** The controller's server certificate in ACM (imported by the bootstrap), for `domainName`. */
  readonly certificate: ICertificate;
  readonly domainName: string;
  /** The VPC of the load balancer's nodes, its public subnets (`vpcSubnets`, by default all) in two zones or more. */
  readonly vpc: IVpc;
  readonly vpcSubnets?: SubnetSelection;
  /** Refuse to delete the load balancer (production); the stack's deletion then stops at it until turned off. */
  readonly deletionProtection: boolean;
  /** The name the listener forwards the client's certificate chain under ({@link clientCertificateHeaderName}). */
  readonly clientCertificateHeader: string;
}

/**
 * The header the listener forwards the client's certificate chain under, in place of `X-Amzn-Mtls-Clientcert`: the
 * functions read a certificate from this name only (`ALB_CLIENT_CERT_HEADER`, `shared/http/forwarded-certificate.ts`),
 * and no client can send it, since AWS does not promise to drop a client's own `X-Amzn-Mtls-Clientcert`. The name ends
 * in the UUID CloudFormation gave the stack when it was created: stable across updates, known only to those who can
 * describe the stack (who could change it anyway), never in an answer. 55 characters, over the 32 the functions need.
 */
export function clientCertificateHeaderName(): string {
  return `x-ziti-client-cert-${Fn.select(2, Fn.split('/', Aws.STACK_ID))}`;
}

/** The listener attribute that renames the forwarded certificate header. */
export const CLIENT_CERT_HEADER_ATTRIBUTE = 'routing.http.request.x_amzn_mtls_clientcert.header_name';

/**
 * How long a connection may sit idle, the load balancer's default: the functions' own timeout (12 s) is far under it,
 * so a slow request is answered by the function's deadline, never cut by the load balancer. Raising it past the SDKs'
 * 60 s poll would keep no fleet connection open: the OpenZiti C SDK sets its controller client's idle keepalive to 0
 * (tlsuv closes the connection as soon as its last request is answered), so every poll opens a connection and a TLS
 * handshake whatever the load balancer allows, and a longer timeout would only hold other clients' idle connections
 * longer (the bill's `newConnectionsPerRequest` stays 1).
 */
export const LOAD_BALANCER_IDLE_TIMEOUT = Duration.seconds(60);

/** Elastic Load Balancing's longest target group name. */
export const MAX_TARGET_GROUP_NAME = 32;

/**
 * A group's target group name, the same at every synth of one stack and load balancer (`owner`, its stack name and
 * construct path) and different for any other in the account and region, where names are unique: `ziti-<group>-`
 * and a hash of the owner, 28 characters at most (`authentication`), within the load balancer's 32.
 */
export function targetGroupNameOf(owner: string, group: OperationGroup): string {
  const hash = createHash('sha256').update(`${owner}/${group}`).digest('hex').slice(0, 8);
  return `ziti-${group}-${hash}`;
}

/** The target group attribute that hands a function every value of a repeated header or query parameter. */
export const MULTI_VALUE_HEADERS_ATTRIBUTE = 'lambda.multi_value_headers.enabled';

/** What a path no rule matches is answered: the controller's 404 in its envelope, without a request id (no function ran). */
export function notFoundBody(): string {
  return JSON.stringify({
    error: { code: 'NOT_FOUND', message: ERROR_CODES.NOT_FOUND.message },
    meta: API_VERSION_META,
  });
}

/**
 * The front door for fleets: one internet-facing Application Load Balancer, one address for every client. Its HTTPS
 * listener serves the controller's server certificate (TLS 1.2 and 1.3) with mutual TLS in passthrough mode: it asks
 * for a client certificate without requiring one and hands the chain it got to the function (`X-Amzn-Mtls-Clientcert`),
 * which checks it against the network's CAs as the local server does, so no truststore needs republishing when a CA
 * is verified. Listener rules derived from the route table (`loadBalancerRules`) send each path to its group's
 * function, one Lambda target group per group; any other path is answered 404 in the envelope by the listener.
 *
 * The functions stay outside the VPC: the load balancer invokes them through the Lambda service, so the VPC needs
 * only public subnets for the load balancer's nodes, and no NAT gateway.
 */
export class ControllerLoadBalancer extends Construct {
  readonly vpc: IVpc;
  readonly loadBalancer: ApplicationLoadBalancer;
  readonly targetGroups: ReadonlyMap<OperationGroup, ApplicationTargetGroup>;
  readonly rules: readonly LoadBalancerRule[];

  constructor(scope: Construct, id: string, props: ControllerLoadBalancerProps) {
    super(scope, id);
    this.vpc = props.vpc;

    const securityGroup = new SecurityGroup(this, 'SecurityGroup', {
      vpc: this.vpc,
      description: 'Ziti controller load balancer: HTTPS from anywhere; its Lambda targets need no network path',
      allowAllOutbound: false,
    });
    securityGroup.addIngressRule(Peer.anyIpv4(), Port.tcp(443), 'HTTPS from the controller clients');
    Validations.of(securityGroup).acknowledge({
      id: 'AwsSolutions-EC23',
      reason:
        "The controller's API is public: enrolled devices, routers and admins call it from any address. The web ACL, " +
        'the functions and mutual TLS decide who gets anything.',
    });

    this.loadBalancer = new ApplicationLoadBalancer(this, 'LoadBalancer', {
      vpc: this.vpc,
      vpcSubnets: props.vpcSubnets ?? { subnetType: SubnetType.PUBLIC },
      internetFacing: true,
      securityGroup,
      idleTimeout: LOAD_BALANCER_IDLE_TIMEOUT,
      deletionProtection: props.deletionProtection,
      // Headers that are not valid HTTP never reach a function.
      dropInvalidHeaderFields: true,
    });
    Validations.of(this.loadBalancer).acknowledge({
      id: 'AwsSolutions-ELB2',
      reason:
        "Every request is in the functions' logs and traces with its request id, and what the web ACL blocked or " +
        "counted in its own log. Access logs would need a bucket policy naming the region's Elastic Load Balancing " +
        'account, which this region-agnostic stack cannot know at synth; turn them on for the load balancer where ' +
        'the region is known.',
    });

    const listener = this.loadBalancer.addListener('Https', {
      port: 443,
      protocol: ApplicationProtocol.HTTPS,
      certificates: [ListenerCertificate.fromCertificateManager(props.certificate)],
      sslPolicy: SslPolicy.RECOMMENDED_TLS,
      mutualAuthentication: { mutualAuthenticationMode: MutualAuthenticationMode.PASS_THROUGH },
      // The security group above opens 443; the listener adds no rule of its own.
      open: false,
      defaultAction: ListenerAction.fixedResponse(ERROR_CODES.NOT_FOUND.status, {
        contentType: 'application/json',
        messageBody: notFoundBody(),
      }),
    });
    (listener.node.defaultChild as CfnListener).listenerAttributes = [
      { key: CLIENT_CERT_HEADER_ATTRIBUTE, value: props.clientCertificateHeader },
    ];

    const targetGroups = new Map<OperationGroup, ApplicationTargetGroup>();
    for (const [group, fn] of props.functions) {
      targetGroups.set(group, this.targetGroupOf(group, fn));
    }
    this.targetGroups = targetGroups;

    this.rules = loadBalancerRules(props.routes);
    this.rules.forEach((rule, index) => {
      const targetGroup = targetGroups.get(rule.group);
      if (!targetGroup) throw new Error(`No function serves group "${rule.group}"`);
      // Named after its priority: a changed route table updates each priority's conditions in place, never moving a
      // rule onto a priority another still holds.
      new ApplicationListenerRule(this, `Rule${index + 1}`, {
        listener,
        priority: index + 1,
        conditions: [
          ListenerCondition.pathPatterns([...rule.paths]),
          ...(rule.methods ? [ListenerCondition.httpRequestMethods([...rule.methods])] : []),
        ],
        action: ListenerAction.forward([targetGroup]),
      });
    });

    // The outputs the REST API's custom domain has, so that DNS is pointed the same way whichever front door.
    const outputs = {
      DomainTarget: {
        description: `The load balancer's DNS name: point ${props.domainName} here (CNAME, or an alias record)`,
        value: this.loadBalancer.loadBalancerDnsName,
      },
      DomainTargetHostedZoneId: {
        description: `The Route 53 hosted zone of the load balancer, for an alias record of ${props.domainName}`,
        value: this.loadBalancer.loadBalancerCanonicalHostedZoneId,
      },
    };
    for (const [outputId, output] of Object.entries(outputs)) {
      new CfnOutput(this, outputId, output).overrideLogicalId(outputId);
    }
  }

  /**
   * One group's target group: its function's alias, which the load balancer invokes with every value of repeated
   * headers and query parameters (as API Gateway's proxy event carries them). The load balancer may invoke the alias
   * only through this target group. The permission names it by its name ({@link targetGroupName}), its id left as a
   * wildcard (Lambda matches a source ARN with `ArnLike`): referring to the group itself would be a dependency cycle,
   * as the group registers its target only once the permission exists. A name is one group's in its account and
   * region, so the pattern matches no other.
   */
  private targetGroupOf(group: OperationGroup, fn: IFunction): ApplicationTargetGroup {
    const stack = Stack.of(this);
    const targetGroupName = targetGroupNameOf(`${stack.stackName}/${this.node.path}`, group);
    fn.addPermission('LoadBalancerInvoke', {
      principal: new ServicePrincipal('elasticloadbalancing.amazonaws.com'),
      sourceAccount: stack.account,
      sourceArn: stack.formatArn({
        service: 'elasticloadbalancing',
        resource: 'targetgroup',
        resourceName: `${targetGroupName}/*`,
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      }),
    });
    const target: IApplicationLoadBalancerTarget = {
      attachToApplicationTargetGroup: () => ({ targetType: TargetType.LAMBDA, targetJson: { id: fn.functionArn } }),
    };
    const targetGroup = new ApplicationTargetGroup(this, functionIdOf(group).replace(/Function$/, 'Targets'), {
      targetGroupName,
      targetType: TargetType.LAMBDA,
      targets: [target],
    });
    targetGroup.setAttribute(MULTI_VALUE_HEADERS_ATTRIBUTE, 'true');
    targetGroup.node.addDependency(fn.permissionsNode.findChild('LoadBalancerInvoke') as CfnResource);
    return targetGroup;
  }
}
