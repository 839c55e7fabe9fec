import { Stack, type StackProps } from 'aws-cdk-lib';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { OperationGroup } from '#shared/routes/route.ts';
import type { ControllerApi } from './controller-api.ts';
import type { ControllerBootstrap } from './controller-bootstrap.ts';
import type { ControllerDomain } from './controller-domain.ts';
import type { ControllerFirewall } from './controller-firewall.ts';
import type { ControllerFunction } from './controller-function.ts';
import type { ControllerIntegrity } from './controller-integrity.ts';
import type { ControllerKeys } from './controller-keys.ts';
import type { ControllerMonitoring } from './controller-monitoring.ts';
import type { ControllerMtlsDomain } from './controller-mtls-domain.ts';
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
  readonly table: ZitiController['table'];
  readonly functions: ReadonlyMap<OperationGroup, ControllerFunction>;
  readonly api: ControllerApi;
  readonly firewall?: ControllerFirewall;
  readonly bootstrap: ControllerBootstrap;
  readonly keys: ControllerKeys;
  readonly integrity?: ControllerIntegrity;
  readonly mtls: ControllerMtlsDomain;
  readonly domain?: ControllerDomain;
  readonly sdkDomain?: ControllerDomain;
  readonly monitoring: ControllerMonitoring;

  constructor(scope: Construct, id: string, props: ControllerStackProps = {}) {
    super(scope, id, props);
    const { alarmTopicArn, ...controllerProps } = props;
    const alarmTopic =
      props.alarmTopic ?? (alarmTopicArn ? Topic.fromTopicArn(this, 'AlarmTopic', alarmTopicArn) : undefined);
    const controller = new ZitiController(this, 'Default', {
      ...controllerProps,
      ...(alarmTopic ? { alarmTopic } : {}),
    });
    this.controller = controller;
    this.table = controller.table;
    this.functions = controller.functions;
    this.api = controller.api;
    if (controller.firewall) this.firewall = controller.firewall;
    this.bootstrap = controller.bootstrap;
    this.keys = controller.keys;
    if (controller.integrity) this.integrity = controller.integrity;
    this.mtls = controller.mtls;
    if (controller.domain) this.domain = controller.domain;
    if (controller.sdkDomain) this.sdkDomain = controller.sdkDomain;
    this.monitoring = controller.monitoring;
  }
}
