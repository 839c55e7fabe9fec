import { Validations } from 'aws-cdk-lib';
import { SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2';
import type { Construct } from 'constructs';

/**
 * Two public subnets in two zones, nothing else: no private subnets, no NAT gateways, nothing billed by the hour. The
 * one VPC of the load balancer front door and the routers' endpoint when the deployment gives no VPC of its own.
 */
export function publicVpc(scope: Construct): Vpc {
  const vpc = new Vpc(scope, 'Vpc', {
    maxAzs: 2,
    natGateways: 0,
    subnetConfiguration: [{ name: 'Public', subnetType: SubnetType.PUBLIC, cidrMask: 24 }],
    // Nothing is placed in the default security group; locking it would take a custom resource function.
    restrictDefaultSecurityGroup: false,
  });
  Validations.of(vpc).acknowledge({
    id: 'AwsSolutions-VPC7',
    reason:
      "The VPC holds only the load balancers and the routers' endpoint tasks: the API's requests are in the web ACL " +
      'log (and, when on, the access logs), and the endpoint logs every channel; flow logs would record the same ' +
      'connections again at a per-GB price.',
  });
  return vpc;
}
