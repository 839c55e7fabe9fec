import { Fn, Stack, type StackProps } from 'aws-cdk-lib';
import { Subnet, Vpc } from 'aws-cdk-lib/aws-ec2';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { ZitiController, type ZitiControllerProps } from './ziti-controller.ts';

export interface ControllerStackProps extends StackProps, ZitiControllerProps {
  /** An existing SNS topic for the alarms, by ARN (the app's `alarmTopicArn` setting); `alarmTopic` wins. */
  readonly alarmTopicArn?: string;
  /** An existing VPC for the load balancers, by id (the app's `vpcId` setting), with its public subnets; `vpc` wins. */
  readonly vpcId?: string;
  readonly publicSubnetIds?: readonly string[];
}

/**
 * A stack holding one {@link ZitiController}: what `cdk/app.ts` deploys. The construct's id is `Default`, which CDK
 * leaves out of logical ids, so its resources keep the ids they had when this stack made them itself.
 */
export class ControllerStack extends Stack {
  readonly controller: ZitiController;

  constructor(scope: Construct, id: string, props: ControllerStackProps = {}) {
    super(scope, id, props);
    const { alarmTopicArn, vpcId, publicSubnetIds, ...controllerProps } = props;
    const alarmTopic =
      props.alarmTopic ?? (alarmTopicArn ? Topic.fromTopicArn(this, 'AlarmTopic', alarmTopicArn) : undefined);
    // By attributes rather than a lookup, which would tie the app to one account and region at synth.
    const vpc =
      props.vpc ?? (vpcId ? Vpc.fromVpcAttributes(this, 'Vpc', { vpcId, availabilityZones: Fn.getAzs() }) : undefined);
    const vpcSubnets =
      props.vpcSubnets ??
      (vpcId && publicSubnetIds
        ? { subnets: publicSubnetIds.map((id) => Subnet.fromSubnetId(this, `PublicSubnet-${id}`, id)) }
        : undefined);
    this.controller = new ZitiController(this, 'Default', {
      ...controllerProps,
      ...(alarmTopic ? { alarmTopic } : {}),
      ...(vpc ? { vpc } : {}),
      ...(vpcSubnets ? { vpcSubnets } : {}),
    });
  }
}
