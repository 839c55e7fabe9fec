import * as kms from '@aws-sdk/client-kms';
import * as secretsManager from '@aws-sdk/client-secrets-manager';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { TABLE_KEYS } from '#shared/store/table-definition.ts';
import { ALARM_THRESHOLDS, KMS_ERROR_NAMES, kmsErrorPattern } from '../../cdk/controller-monitoring.ts';
import { ControllerStack, type ControllerStackProps } from '../../cdk/controller-stack.ts';
import { cdkJsonContext } from './synth-context.ts';

interface CfnResource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
}

interface MetricStat {
  readonly Metric: { readonly Namespace: string; readonly MetricName: string; readonly Dimensions?: Dimension[] };
  readonly Stat: string;
}
interface Dimension {
  readonly Name: string;
  readonly Value: unknown;
}
interface AlarmProperties {
  readonly AlarmName: string;
  readonly Threshold: number;
  readonly EvaluationPeriods: number;
  readonly ComparisonOperator: string;
  readonly TreatMissingData: string;
  readonly AlarmActions: unknown[];
  readonly OKActions: unknown[];
  readonly Namespace?: string;
  readonly MetricName?: string;
  readonly Dimensions?: Dimension[];
  readonly Metrics?: { Id: string; Expression?: string; MetricStat?: MetricStat }[];
}

function synth(props: ControllerStackProps = {}) {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new ControllerStack(app, 'MonitoredController', props);
  const template = Template.fromStack(stack);
  const resources = (template.toJSON() as { Resources: Record<string, CfnResource> }).Resources;
  const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);
  const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const alarms = new Map(
    ofType('AWS::CloudWatch::Alarm').map(([, alarm]) => {
      const properties = alarm.Properties as unknown as AlarmProperties;
      return [properties.AlarmName, properties];
    }),
  );
  const alarm = (name: string) => {
    const found = alarms.get(`MonitoredController-${name}`);
    if (!found) throw new Error(`no alarm ${name}; there are ${[...alarms.keys()].join(', ')}`);
    return found;
  };
  return { stack, template, resources, ofType, logicalId, alarms, alarm };
}

/** Every metric an alarm reads: its own, or those of its math expression. */
function metricsOf(alarm: AlarmProperties): { namespace: string; name: string; dimensions: Dimension[] }[] {
  if (alarm.MetricName) {
    return [{ namespace: alarm.Namespace!, name: alarm.MetricName, dimensions: alarm.Dimensions ?? [] }];
  }
  return (alarm.Metrics ?? []).flatMap((metric) =>
    metric.MetricStat
      ? [
          {
            namespace: metric.MetricStat.Metric.Namespace,
            name: metric.MetricStat.Metric.MetricName,
            dimensions: metric.MetricStat.Metric.Dimensions ?? [],
          },
        ]
      : [],
  );
}

const dimension = (metric: { dimensions: Dimension[] }, name: string) =>
  metric.dimensions.find((d) => d.Name === name)?.Value;

describe('the alarms', () => {
  const { stack, ofType, logicalId, alarms, alarm } = synth({ alarmEmail: 'ops@example.com' });
  const [topicId] = ofType('AWS::SNS::Topic')[0]!;

  it('all notify one SNS topic, on alarm and on recovery, and read no data as fine', () => {
    expect(ofType('AWS::SNS::Topic')).toHaveLength(1);
    expect(alarms.size).toBeGreaterThan(0);
    for (const [name, properties] of alarms) {
      expect(properties.AlarmActions, name).toEqual([{ Ref: topicId }]);
      expect(properties.OKActions, name).toEqual([{ Ref: topicId }]);
      expect(properties.TreatMissingData, name).toBe('notBreaching');
      expect(properties.ComparisonOperator, name).toBe('GreaterThanOrEqualToThreshold');
    }
  });

  it('e-mail the address given, over a topic only CloudWatch of this account publishes to, over TLS', () => {
    const subscriptions = ofType('AWS::SNS::Subscription');
    expect(subscriptions.map(([, s]) => s.Properties)).toEqual([
      { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topicId } },
    ]);
    const [, policy] = ofType('AWS::SNS::TopicPolicy')[0]!;
    const statements = (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: 'sns:Publish',
        Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
      }),
    );
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
  });

  it('fire on 5% of the API answered 5xx, counted only from ten requests in five minutes', () => {
    const api = alarm('api-5xx');
    expect(api.Threshold).toBe(ALARM_THRESHOLDS.api5xxPercent);
    const expression = api.Metrics?.find((metric) => metric.Expression)?.Expression;
    expect(expression).toBe(`IF(requests >= ${ALARM_THRESHOLDS.apiMinimumRequests}, 100 * errors / requests, 0)`);
    expect(metricsOf(api).map((metric) => [metric.namespace, metric.name])).toEqual(
      expect.arrayContaining([
        ['AWS/ApiGateway', 'Count'],
        ['AWS/ApiGateway', '5XXError'],
      ]),
    );
    const stageId = logicalId(stack.controller.api!.restApi.deploymentStage);
    for (const metric of metricsOf(api)) {
      expect(dimension(metric, 'ApiName')).toBe('MonitoredController-api');
      expect(dimension(metric, 'Stage')).toEqual({ Ref: stageId });
    }
  });

  it("fire on any error or throttle of each function, the bootstrap's and integrity scan's included", () => {
    const throttled = [
      ...stack.controller.functions.values(),
      stack.controller.bootstrap.function,
      ...(stack.controller.integrity ? [stack.controller.integrity.function] : []),
    ];
    const failing = [...throttled, stack.controller.sessionSweep.function];
    for (const [kind, functions] of [
      ['Errors', failing],
      ['Throttles', throttled],
    ] as const) {
      const watched = [...alarms.values()]
        .flatMap(metricsOf)
        .filter((metric) => metric.namespace === 'AWS/Lambda' && metric.name === kind)
        .map((metric) => dimension(metric, 'FunctionName'));
      expect(watched, kind).toHaveLength(functions.length);
      expect(watched, kind).toEqual(expect.arrayContaining(functions.map((fn) => ({ Ref: logicalId(fn) }))));
    }
    expect(alarm('database-errors').Threshold).toBe(1);
    expect(alarm('database-throttles').Threshold).toBe(1);
  });

  it("fire on any failed run of the ended sessions' sweep, and not on its throttles: it runs one at a time", () => {
    const failed = alarm('session-sweep-errors');
    expect(failed.Threshold).toBe(ALARM_THRESHOLDS.functionErrors);
    expect(metricsOf(failed)).toEqual([
      {
        namespace: 'AWS/Lambda',
        name: 'Errors',
        dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(stack.controller.sessionSweep.function) } }],
      },
    ]);
    expect(alarms.has('MonitoredController-session-sweep-throttles')).toBe(false);
  });

  it('fire on throttling of the table or any index for two periods in a row, and on its system errors', () => {
    const throttles = alarm('table-throttles');
    expect(throttles.EvaluationPeriods).toBe(ALARM_THRESHOLDS.tableThrottlePeriods);
    const watched = metricsOf(throttles).map((metric) => [
      metric.name,
      dimension(metric, 'GlobalSecondaryIndexName') ?? 'table',
    ]);
    for (const index of ['table', ...TABLE_KEYS.indexes.map((i) => i.name)]) {
      expect(watched).toContainEqual(['ReadThrottleEvents', index]);
      expect(watched).toContainEqual(['WriteThrottleEvents', index]);
    }
    const errors = alarm('table-system-errors');
    expect(errors.Threshold).toBe(ALARM_THRESHOLDS.tableSystemErrors);
    const operations = metricsOf(errors).map((metric) => {
      expect(metric.name).toBe('SystemErrors');
      expect(dimension(metric, 'TableName')).toEqual({ Ref: logicalId(stack.controller.table) });
      return dimension(metric, 'Operation');
    });
    expect(operations).toEqual(expect.arrayContaining(['GetItem', 'Query', 'TransactWriteItems', 'BatchGetItem']));
    // CloudWatch takes at most ten metrics in an alarm's expression.
    expect(operations.length).toBeLessThanOrEqual(10);
  });

  it("fire on many requests the web ACL blocked, read under the web ACL's own metric name", () => {
    const blocked = alarm('waf-blocked');
    const [metric] = metricsOf(blocked);
    const [, webAcl] = ofType('AWS::WAFv2::WebACL')[0]!;
    const metricName = (webAcl.Properties.VisibilityConfig as { MetricName: string }).MetricName;
    expect(metricName).toBe('MonitoredController-api');
    expect(metric).toMatchObject({ namespace: 'AWS/WAFV2', name: 'BlockedRequests' });
    expect(dimension(metric!, 'WebACL')).toBe(metricName);
    expect(dimension(metric!, 'Rule')).toBe('ALL');
    expect(blocked.Threshold).toBe(ALARM_THRESHOLDS.wafBlockedRequests);
  });

  it('fire on an integrity run that failed, timed out or was aborted', () => {
    const runs = alarm('integrity-run-failed');
    const machine = { Ref: logicalId(stack.controller.integrity!.stateMachine) };
    expect(metricsOf(runs).map((metric) => [metric.name, dimension(metric, 'StateMachineArn')])).toEqual(
      expect.arrayContaining([
        ['ExecutionsFailed', machine],
        ['ExecutionsTimedOut', machine],
        ['ExecutionsAborted', machine],
      ]),
    );
    expect(runs.Threshold).toBe(1);
  });

  it('fire on a KMS error in the log of any function that uses KMS, counted by metric filters', () => {
    const filters = ofType('AWS::Logs::MetricFilter').map(([, filter]) => filter.Properties);
    const kmsUsers = ['identities', 'routers', 'pki', 'authentication'] as const;
    const watchedLogs = filters.map((filter) => filter.LogGroupName);
    for (const group of kmsUsers) {
      expect(watchedLogs).toContainEqual({ Ref: logicalId(stack.controller.functions.get(group)!.logGroup as never) });
    }
    expect(watchedLogs).toContainEqual({ Ref: logicalId(stack.controller.bootstrap.function.logGroup as never) });
    // A function that never calls KMS is not watched for it.
    expect(watchedLogs).not.toContainEqual({
      Ref: logicalId(stack.controller.functions.get('database')!.logGroup as never),
    });
    for (const filter of filters) {
      expect(filter.FilterPattern).toBe(kmsErrorPattern());
      expect(filter.MetricTransformations).toEqual([
        { MetricNamespace: 'ZitiController/MonitoredController', MetricName: 'KmsErrors', MetricValue: '1' },
      ]);
    }
    const [metric] = metricsOf(alarm('kms-errors'));
    expect(metric).toMatchObject({ namespace: 'ZitiController/MonitoredController', name: 'KmsErrors' });
  });

  it("count the KMS client's own error names (and Secrets Manager's for a key it could not use), in both fields", () => {
    const known = new Set([...Object.keys(kms), ...Object.keys(secretsManager)]);
    for (const name of KMS_ERROR_NAMES) {
      if (name.endsWith('*')) {
        expect([...known].some((exported) => exported.startsWith(name.slice(0, -1)))).toBe(true);
      } else {
        expect(known.has(name), name).toBe(true);
      }
    }
    // `error`: the fault log line of a request (shared/http/middleware/error-envelope.ts); `errorType`: Lambda's
    // record of a failed invocation (the bootstrap throws).
    expect(kmsErrorPattern()).toContain('($.error = "KMS*")');
    expect(kmsErrorPattern()).toContain('($.errorType = "DisabledException")');
    // CloudWatch Logs takes filter patterns of at most 1,024 characters.
    expect(kmsErrorPattern().length).toBeLessThanOrEqual(1024);
  });

  it('are shown on one dashboard named after the stack, with every alarm in its status widget', () => {
    const dashboards = ofType('AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    const [, dashboard] = dashboards[0]!;
    expect(dashboard.Properties.DashboardName).toBe('MonitoredController');
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const [alarmId, resource] of ofType('AWS::CloudWatch::Alarm')) {
      expect(body, (resource.Properties as unknown as AlarmProperties).AlarmName).toContain(alarmId);
    }
    for (const metric of ['5XXError', 'Latency', 'ConsumedReadCapacityUnits', 'BlockedRequests', 'KmsErrors']) {
      expect(body).toContain(metric);
    }
  });
});

describe('the alarms with an existing topic', () => {
  it('notify that topic and make none', () => {
    const topicArn = 'arn:aws:sns:eu-west-1:123456789012:paging';
    const { template, alarms, ofType } = synth({ alarmTopicArn: topicArn });
    expect(ofType('AWS::SNS::Topic')).toEqual([]);
    for (const properties of alarms.values()) expect(properties.AlarmActions).toEqual([topicArn]);
    template.hasOutput('AlarmTopicArn', { Value: topicArn });
  });

  it('has no web ACL alarm when the web ACL is turned off', () => {
    const { alarms, ofType } = synth({ firewall: false });
    expect(ofType('AWS::WAFv2::WebACL')).toEqual([]);
    expect([...alarms.keys()].some((name) => name.endsWith('waf-blocked'))).toBe(false);
    expect(alarms.size).toBeGreaterThan(0);
  });
});

describe('the alarms of an imported table', () => {
  it('watch the table by its name', () => {
    const { alarm } = synth({ tableName: 'ziti-controller-restored' });
    for (const metric of metricsOf(alarm('table-throttles'))) {
      expect(dimension(metric, 'TableName')).toBe('ziti-controller-restored');
    }
  });
});
