import { Stack, type StackProps } from 'aws-cdk-lib';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { ZitiController, type ZitiControllerProps } from './ziti-controller.ts';

export interface ControllerStackProps extends StackProps, ZitiControllerProps {
  /** An existing SNS topic for the alarms, by ARN (the app's `alarmTopicArn` setting); `alarmTopic` wins. */
  readonly alarmTopicArn?: string;
}

/**
 * A stack holding one {@link ZitiController}: what `cdk/app.ts` deploys. The construct's id is `Default`, which CDK
 * leaves out of logical ids, so its resources keep the ids they had when this stack made them itself.
 */
export class ControllerStack extends Stack {
  readonly controller: ZitiController;

  constructor(scope: Construct, id: string, props: ControllerStackProps = {}) {
    super(scope, id, props);
    const { alarmTopicArn, ...controllerProps } = props;
    const alarmTopic =
      props.alarmTopic ?? (alarmTopicArn ? Topic.fromTopicArn(this, 'AlarmTopic', alarmTopicArn) : undefined);
    this.controller = new ZitiController(this, 'Default', {
      ...controllerProps,
      ...(alarmTopic ? { alarmTopic } : {}),
    });
  }
}
