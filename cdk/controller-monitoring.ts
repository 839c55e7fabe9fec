import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { type ITable, Operation } from 'aws-cdk-lib/aws-dynamodb';
import type { IApplicationLoadBalancer } from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { FilterPattern, type ILogGroup, MetricFilter } from 'aws-cdk-lib/aws-logs';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { TABLE_KEYS } from '#shared/store/table-definition.ts';
import type { ControllerRouterEndpoint } from './controller-router-endpoint.ts';
import { type FrontDoorMetrics, loadBalancerMetrics, restApiMetrics } from './front-door-metrics.ts';

/** A function the monitoring watches: its metrics, and the log group its faults are written to. */
export interface MonitoredFunction {
  readonly name: string;
  readonly function: IFunction;
  readonly logGroup: ILogGroup;
  /** Whether it calls KMS (signs with a CA key, reads the server key's secret, seals or opens stored secrets). */
  readonly usesKms: boolean;
  /**
   * Whether its throttles raise an alarm (the default). Not for a function whose own reserved concurrency throttles it on
   * purpose (the ended sessions' sweep, one run at a time): a throttle there is a run waiting for the one before, and
   * the account's concurrency running out never throttles a function with concurrency reserved.
   */
  readonly alarmOnThrottles?: boolean;
}

export interface ControllerMonitoringProps {
  /** The API's stage: its request count, 5xx and latency (API-wide metrics, sent whatever `detailedMetrics` says). */
  readonly stage?: Stage;
  /** The load balancer, when it is the front door instead: its requests, 5xx, latency and its own faults. */
  readonly loadBalancer?: IApplicationLoadBalancer;
  readonly functions: readonly MonitoredFunction[];
  readonly table: ITable;
  /** The web ACL's CloudWatch metric name (its visibility config), if the API has one. */
  readonly webAclMetricName?: string;
  readonly integrityStateMachine?: IStateMachine;
  /** The routers' control channel endpoint (`routerEndpoint: true`): its targets' health and its tasks' CPU. */
  readonly routerEndpoint?: ControllerRouterEndpoint;
  /** Where every alarm goes; without it a topic is made here. */
  readonly topic?: ITopic;
  /** An address subscribed to the topic (SNS asks it to confirm first). */
  readonly email?: string;
}

/**
 * When each alarm fires, and why there. Each alarm evaluates five-minute periods and treats missing data (no traffic,
 * no invocations) as fine.
 */
export const ALARM_THRESHOLDS = {
  /**
   * Percent of the stage's requests answered 5xx in five minutes, once there are at least `apiMinimumRequests`. The
   * controller's own refusals are 4xx; a 5xx is a fault (an unhandled error, a timeout, a function that could not
   * run), so one request in twenty failing is an incident, not noise. Under ten requests a percentage says nothing
   * (one failure in three is 33%): there the function alarms below still catch crashes.
   */
  api5xxPercent: 5,
  apiMinimumRequests: 10,
  /**
   * Lambda `Errors`: invocations that failed outside the handler's error envelope (a crash, running out of memory, a
   * timeout past the early answer, a failed cold start, a failed bootstrap or renewal). Every error a request causes
   * is an answer, not an `Errors` count, so one is already a bug worth reading.
   */
  functionErrors: 1,
  /**
   * Lambda `Throttles`: the account's (or region's) concurrency ran out and Lambda refused to run a request at all;
   * API Gateway answers it as a 5xx. One means clients were turned away.
   */
  functionThrottles: 1,
  /**
   * DynamoDB read and write throttle events of the table and its indexes, in each of two five-minute periods in a row.
   * The SDK retries a throttled request with backoff, so a moment's throttling is absorbed; ten minutes of it mean
   * requests are slow or failing: a hot partition, or traffic past double the previous peak of an on-demand table.
   */
  tableThrottleEvents: 1,
  tableThrottlePeriods: 2,
  /**
   * DynamoDB `SystemErrors` (its own 500s) across the operations the store uses. The SDK retries them and an odd one
   * happens at any scale; five in five minutes mean retries are running out (look at the AWS Health Dashboard).
   */
  tableSystemErrors: 5,
  /**
   * Requests the web ACL blocked in five minutes. A few an hour are the internet's background (scanners meeting the
   * IP reputation and bad-input rules). A hundred in five minutes is an attack, or a fleet behind one address hitting
   * the rate limit, or a managed rule misjudging legitimate traffic: each needs a look at the WAF log.
   */
  wafBlockedRequests: 100,
  /**
   * Connections the load balancer refused because it had reached its maximum: it scales with load, so any means
   * clients were turned away while it did (a surge of reconnects) and should be read with the request count.
   */
  loadBalancerRejectedConnections: 1,
  /**
   * Lambda target errors of the load balancer (a function it could not invoke, one throttled, a response it could not
   * read): each is a 502 outside the envelope, as a Lambda `Errors` count is, so one is worth reading.
   */
  loadBalancerTargetErrors: 1,
  /** Integrity runs that failed, timed out or were aborted: the check or fix an admin asked for did not finish. */
  integrityRunFailures: 1,
  /**
   * Faults naming a KMS error (a key disabled, pending deletion or unavailable, a ciphertext that does not open) in
   * the functions' logs. The CA keys sign every certificate and the secrets key opens every TOTP seed, so one means
   * enrollments, logins or MFA are failing.
   */
  kmsErrors: 1,
  /**
   * The routers' endpoint: no healthy task behind its load balancer for five minutes means no router can connect (and
   * every connected one has lost its channel); an unhealthy task in each of two periods in a row, one that keeps
   * failing its health checks while ECS has not yet replaced it.
   */
  routerEndpointUnhealthyTasks: 1,
  routerEndpointUnhealthyPeriods: 2,
  /**
   * The endpoint tasks' average CPU (percent) over two periods in a row: scaling keeps it near 60%, so this high means
   * the service is at its maximum count (raise `routerEndpointMaxCount` or the task size).
   */
  routerEndpointCpuPercent: 85,
  routerEndpointCpuPeriods: 2,
  /**
   * A router's data model that did not fit in one message (`ctrl-channel/router-data-model.ts`): its policy part is
   * left out whole, so that router refuses every OIDC session's Dial and Bind (and a tunneler may lose its own grants,
   * identities their second path). One is a network grown past what one router's model holds: split the router's
   * edge router policies (fewer identities a router) or the service policies.
   */
  routerDataModelTooLarge: 1,
} as const;

/**
 * The routers' endpoint's warning of a data model that did not fit (`ROUTER_DATA_MODEL_TOO_LARGE` of
 * `ctrl-channel/router-data-model.ts`, which a CDK test holds this to), whatever it left out.
 */
export const ROUTER_DATA_MODEL_TOO_LARGE_PATTERN = '{ $.message = "router data model too large*" }';

/**
 * Error names of the KMS client (and Secrets Manager's for a secret KMS would not decrypt or encrypt), as the API's
 * fault log (`error`) and Lambda's record of a failed invocation (`errorType`) write them. `AccessDeniedException` and
 * `NotFoundException` are not KMS's alone (DynamoDB, API Gateway), so they are left to the function and 5xx alarms.
 */
export const KMS_ERROR_NAMES = [
  'KMS*',
  'DisabledException',
  'KeyUnavailableException',
  'InvalidCiphertextException',
  'IncorrectKeyException',
  'InvalidKeyUsageException',
  'InvalidGrantTokenException',
  'DependencyTimeoutException',
  'DecryptionFailure',
  'EncryptionFailure',
] as const;

/** Every log line the filter counts as a KMS error, as a CloudWatch Logs JSON filter pattern. */
export function kmsErrorPattern(): string {
  const terms = ['error', 'errorType'].flatMap((field) => KMS_ERROR_NAMES.map((name) => `($.${field} = "${name}")`));
  return `{ ${terms.join(' || ')} }`;
}

/** The DynamoDB operations the store sends (`shared/store`), whose system errors are watched. */
const TABLE_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.QUERY,
  Operation.SCAN,
  Operation.BATCH_GET_ITEM,
  Operation.BATCH_WRITE_ITEM,
  Operation.TRANSACT_WRITE_ITEMS,
];

const PERIOD = Duration.minutes(5);

/**
 * The controller's alarms and dashboard: API 5xx, each function's errors and throttles, the table's throttling and
 * system errors, the web ACL's blocks, failed integrity runs and KMS errors, all to one SNS topic (given, or made here
 * with `email` subscribed), and one dashboard of the same metrics. The thresholds and their reasons are
 * {@link ALARM_THRESHOLDS}.
 */
export class ControllerMonitoring extends Construct {
  readonly topic: ITopic;
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;
  /** Where the KMS error count is kept: one namespace per stack, as metric filters cannot add a constant dimension. */
  readonly kmsErrors: Metric;

  constructor(scope: Construct, id: string, props: ControllerMonitoringProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const prefix = stack.stackName;
    this.topic = props.topic ?? this.alarmTopic(prefix);
    if (props.email) this.subscribe(props.email);

    const alarm = (alarmId: string, description: string, options: AlarmOptions) => {
      const made = new Alarm(this, alarmId, {
        alarmName: `${prefix}-${options.name}`,
        alarmDescription: description,
        metric: options.metric,
        threshold: options.threshold,
        evaluationPeriods: options.periods ?? 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      made.addAlarmAction(new SnsAction(this.topic));
      made.addOkAction(new SnsAction(this.topic));
      this.alarms.push(made);
      return made;
    };

    const loadBalancer = props.loadBalancer ? loadBalancerMetrics(props.loadBalancer, PERIOD) : undefined;
    const frontDoor: FrontDoorMetrics | undefined =
      loadBalancer ?? (props.stage && restApiMetrics(props.stage, PERIOD));
    if (!frontDoor) throw new Error('The monitoring needs the front door: the stage or the load balancer');
    const { requests, serverErrors } = frontDoor;
    const { api5xxPercent, apiMinimumRequests } = ALARM_THRESHOLDS;
    alarm(
      'Api5xx',
      `More than ${api5xxPercent}% of the API's requests answered 5xx in five minutes (with ${apiMinimumRequests} or more requests)`,
      {
        name: 'api-5xx',
        metric: new MathExpression({
          expression: `IF(requests >= ${apiMinimumRequests}, 100 * errors / requests, 0)`,
          usingMetrics: { requests, errors: serverErrors },
          period: PERIOD,
          label: '5xx %',
        }),
        threshold: api5xxPercent,
      },
    );

    if (loadBalancer) {
      alarm(
        'LoadBalancerRejectedConnections',
        'The load balancer refused connections at its maximum (RejectedConnectionCount)',
        {
          name: 'load-balancer-rejected-connections',
          metric: loadBalancer.rejectedConnections,
          threshold: ALARM_THRESHOLDS.loadBalancerRejectedConnections,
        },
      );
      alarm('LoadBalancerTargetErrors', 'The load balancer failed to invoke a function or read its answer (502)', {
        name: 'load-balancer-target-errors',
        metric: loadBalancer.targetErrors,
        threshold: ALARM_THRESHOLDS.loadBalancerTargetErrors,
      });
    }

    for (const { name, function: fn, alarmOnThrottles } of props.functions) {
      alarm(`${pascal(name)}Errors`, `The ${name} function failed an invocation (Lambda Errors)`, {
        name: `${name}-errors`,
        metric: fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
        threshold: ALARM_THRESHOLDS.functionErrors,
      });
      if (alarmOnThrottles === false) continue;
      alarm(`${pascal(name)}Throttles`, `Lambda refused to run the ${name} function (Throttles)`, {
        name: `${name}-throttles`,
        metric: fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
        threshold: ALARM_THRESHOLDS.functionThrottles,
      });
    }

    const throttleEvents = this.tableThrottleEvents(props.table);
    alarm('TableThrottles', 'DynamoDB throttled the table or an index for ten minutes', {
      name: 'table-throttles',
      metric: throttleEvents,
      threshold: ALARM_THRESHOLDS.tableThrottleEvents,
      periods: ALARM_THRESHOLDS.tableThrottlePeriods,
    });
    const systemErrors = props.table.metricSystemErrorsForOperations({
      operations: TABLE_OPERATIONS,
      period: PERIOD,
      statistic: 'Sum',
    });
    alarm('TableSystemErrors', 'DynamoDB answered the store with its own errors (SystemErrors)', {
      name: 'table-system-errors',
      metric: systemErrors,
      threshold: ALARM_THRESHOLDS.tableSystemErrors,
    });

    const blocked = props.webAclMetricName
      ? new Metric({
          namespace: 'AWS/WAFV2',
          metricName: 'BlockedRequests',
          dimensionsMap: { WebACL: props.webAclMetricName, Region: stack.region, Rule: 'ALL' },
          period: PERIOD,
          statistic: 'Sum',
        })
      : undefined;
    if (blocked) {
      alarm('WafBlocked', 'The web ACL blocked many requests (an attack, or legitimate clients refused)', {
        name: 'waf-blocked',
        metric: blocked,
        threshold: ALARM_THRESHOLDS.wafBlockedRequests,
      });
    }

    const machine = props.integrityStateMachine;
    const integrityFailures = machine
      ? new MathExpression({
          expression: 'failed + timedOut + aborted',
          usingMetrics: {
            failed: machine.metricFailed({ period: PERIOD, statistic: 'Sum' }),
            timedOut: machine.metricTimedOut({ period: PERIOD, statistic: 'Sum' }),
            aborted: machine.metricAborted({ period: PERIOD, statistic: 'Sum' }),
          },
          period: PERIOD,
          label: 'integrity runs not finished',
        })
      : undefined;
    if (integrityFailures) {
      alarm('IntegrityRunFailed', 'A data-integrity check or fix failed, timed out or was aborted', {
        name: 'integrity-run-failed',
        metric: integrityFailures,
        threshold: ALARM_THRESHOLDS.integrityRunFailures,
      });
    }

    if (props.routerEndpoint) {
      const { targetGroup, service } = props.routerEndpoint;
      alarm(
        'RouterEndpointNoHealthyTargets',
        "No healthy task behind the routers' load balancer: routers cannot connect",
        {
          name: 'router-endpoint-no-healthy-targets',
          metric: new MathExpression({
            expression: 'IF(healthy < 1, 1, 0)',
            usingMetrics: { healthy: targetGroup.metrics.healthyHostCount({ period: PERIOD, statistic: 'Minimum' }) },
            period: PERIOD,
            label: 'no healthy endpoint task',
          }),
          threshold: 1,
        },
      );
      alarm(
        'RouterEndpointUnhealthyTasks',
        "A routers' endpoint task keeps failing the load balancer's health checks",
        {
          name: 'router-endpoint-unhealthy-tasks',
          metric: targetGroup.metrics.unHealthyHostCount({ period: PERIOD, statistic: 'Maximum' }),
          threshold: ALARM_THRESHOLDS.routerEndpointUnhealthyTasks,
          periods: ALARM_THRESHOLDS.routerEndpointUnhealthyPeriods,
        },
      );
      alarm('RouterEndpointCpu', "The routers' endpoint tasks stay busy past what scaling keeps them to", {
        name: 'router-endpoint-cpu',
        metric: service.metricCpuUtilization({ period: PERIOD, statistic: 'Average' }),
        threshold: ALARM_THRESHOLDS.routerEndpointCpuPercent,
        periods: ALARM_THRESHOLDS.routerEndpointCpuPeriods,
      });
      const tooLarge = new Metric({
        namespace: `ZitiController/${prefix}`,
        metricName: 'RouterDataModelTooLarge',
        period: PERIOD,
        statistic: 'Sum',
      });
      new MetricFilter(this, 'RouterDataModelTooLargeCount', {
        logGroup: props.routerEndpoint.logGroup,
        filterPattern: FilterPattern.literal(ROUTER_DATA_MODEL_TOO_LARGE_PATTERN),
        metricNamespace: tooLarge.namespace,
        metricName: tooLarge.metricName,
        metricValue: '1',
      });
      alarm(
        'RouterDataModelTooLarge',
        "A router's data model did not fit in a message: its policies were left out and it refuses OIDC sessions' dials; split its edge router policies or the service policies",
        { name: 'router-data-model-too-large', metric: tooLarge, threshold: ALARM_THRESHOLDS.routerDataModelTooLarge },
      );
    }

    this.kmsErrors = new Metric({
      namespace: `ZitiController/${prefix}`,
      metricName: 'KmsErrors',
      period: PERIOD,
      statistic: 'Sum',
    });
    for (const { name, logGroup } of props.functions.filter((fn) => fn.usesKms)) {
      new MetricFilter(this, `${pascal(name)}KmsErrors`, {
        logGroup,
        filterPattern: FilterPattern.literal(kmsErrorPattern()),
        metricNamespace: this.kmsErrors.namespace,
        metricName: this.kmsErrors.metricName,
        metricValue: '1',
      });
    }
    alarm('KmsErrors', 'A function failed on a KMS key (disabled, pending deletion, unavailable) or ciphertext', {
      name: 'kms-errors',
      metric: this.kmsErrors,
      threshold: ALARM_THRESHOLDS.kmsErrors,
    });

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: prefix,
      defaultInterval: Duration.hours(6),
    });
    const functionMetric = (pick: (fn: IFunction) => IMetric) => props.functions.map(({ function: fn }) => pick(fn));
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: `# ${prefix}\nAlarms go to the SNS topic \`${this.topic.topicName}\`; each alarm's description says what it means (cdk/controller-monitoring.ts says why its threshold).`,
        width: 24,
        height: 2,
      }),
      new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 4 }),
      new GraphWidget({
        title: 'API requests and errors',
        left: [requests, frontDoor.clientErrors, serverErrors],
        width: 12,
      }),
      new GraphWidget({ title: frontDoor.latencyTitle, left: [...frontDoor.latency], width: 12 }),
      new GraphWidget({
        title: 'Function errors',
        left: functionMetric((fn) => fn.metricErrors({ period: PERIOD, statistic: 'Sum' })),
        width: 8,
      }),
      new GraphWidget({
        title: 'Function throttles',
        left: functionMetric((fn) => fn.metricThrottles({ period: PERIOD, statistic: 'Sum' })),
        width: 8,
      }),
      new GraphWidget({
        title: 'Function duration p99 (ms)',
        left: functionMetric((fn) => fn.metricDuration({ period: PERIOD, statistic: 'p99' })),
        width: 8,
      }),
      new GraphWidget({
        title: 'Table capacity used',
        left: [
          props.table.metricConsumedReadCapacityUnits({ period: PERIOD, statistic: 'Sum' }),
          props.table.metricConsumedWriteCapacityUnits({ period: PERIOD, statistic: 'Sum' }),
        ],
        width: 8,
      }),
      new GraphWidget({
        title: 'Table throttle events and system errors',
        left: [throttleEvents, systemErrors],
        width: 8,
      }),
      new GraphWidget({
        title: 'Web ACL, integrity runs, KMS errors',
        left: [...(blocked ? [blocked] : []), ...(integrityFailures ? [integrityFailures] : []), this.kmsErrors],
        width: 8,
      }),
    );
  }

  /** Read and write throttle events of the table and of each global secondary index, summed. */
  private tableThrottleEvents(table: ITable): MathExpression {
    const metrics: Record<string, IMetric> = {};
    const indexes = [undefined, ...TABLE_KEYS.indexes.map((index) => index.name)];
    indexes.forEach((index, i) => {
      for (const kind of ['Read', 'Write'] as const) {
        metrics[`${kind.toLowerCase()}${i}`] = table.metric(`${kind}ThrottleEvents`, {
          period: PERIOD,
          statistic: 'Sum',
          dimensionsMap: { TableName: table.tableName, ...(index ? { GlobalSecondaryIndexName: index } : {}) },
        });
      }
    });
    return new MathExpression({
      expression: Object.keys(metrics).join(' + '),
      usingMetrics: metrics,
      period: PERIOD,
      label: 'throttle events',
    });
  }

  /**
   * A topic for the alarms. Only CloudWatch publishes to it, over TLS (the topic policy refuses anything else). Not
   * encrypted under a KMS key: alarm notifications carry alarm names, metric values and thresholds, nothing secret,
   * and CloudWatch can publish to an encrypted topic only when a customer key's policy names it, a dependency that
   * fails silently (the alarm fires, no one hears). A deployment that must encrypt passes its own topic.
   */
  private alarmTopic(prefix: string): Topic {
    const topic = new Topic(this, 'Topic', { displayName: `${prefix} alarms`, enforceSSL: true });
    // A topic policy replaces SNS's default, which let the account's principals publish: CloudWatch alarms of this
    // account, which publish as the service, need their own statement.
    topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsPublish',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    );
    return topic;
  }

  private subscribe(email: string): void {
    const subscription = this.topic.addSubscription(new EmailSubscription(email));
    Validations.of(subscription).acknowledge({
      id: 'Serverless-SNSRedrivePolicy',
      reason:
        'An e-mail SNS could not deliver would sit in a queue nobody reads; the alarm stays in ALARM in CloudWatch ' +
        'and on the dashboard, which is where an undelivered notification is noticed.',
    });
  }
}

interface AlarmOptions {
  readonly name: string;
  readonly metric: IMetric;
  readonly threshold: number;
  readonly periods?: number;
}

/** `posture-checks` → `PostureChecks`. */
function pascal(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('');
}
