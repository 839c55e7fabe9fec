import { Validations } from 'aws-cdk-lib';
import { SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2';
import type { Construct } from 'constructs';

/**
 * Two public subnets in two zones, nothing else: no private subnets, no NAT gateways, nothing billed by the hour. For a
 * load balancer and what stands behind it when the deployment gives no VPC of its own; `flowLogsReason` says why the
 * VPC keeps no flow logs (what already records its connections).
 */
export function publicVpc(scope: Construct, flowLogsReason: string): Vpc {
  const vpc = new Vpc(scope, 'Vpc', {
    maxAzs: 2,
    natGateways: 0,
    subnetConfiguration: [{ name: 'Public', subnetType: SubnetType.PUBLIC, cidrMask: 24 }],
    // Nothing is placed in the default security group; locking it would take a custom resource function.
    restrictDefaultSecurityGroup: false,
  });
  Validations.of(vpc).acknowledge({ id: 'AwsSolutions-VPC7', reason: flowLogsReason });
  return vpc;
}
