import type { Duration } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { type IMetric, MathExpression } from 'aws-cdk-lib/aws-cloudwatch';
import { HttpCodeElb, HttpCodeTarget, type IApplicationLoadBalancer } from 'aws-cdk-lib/aws-elasticloadbalancingv2';

/** What the alarms and the dashboard read of the front door, whichever it is. */
export interface FrontDoorMetrics {
  readonly requests: IMetric;
  /** Requests answered 4xx, by the front door itself or by a function. */
  readonly clientErrors: IMetric;
  /** Requests answered 5xx, by the front door itself (a function that could not run) or by a function. */
  readonly serverErrors: IMetric;
  readonly latencyTitle: string;
  readonly latency: readonly IMetric[];
}

/** The REST API stage's metrics (API-wide, sent whatever `detailedMetrics` says). */
export function restApiMetrics(stage: Stage, period: Duration): FrontDoorMetrics {
  return {
    requests: stage.metricCount({ period, statistic: 'Sum' }),
    clientErrors: stage.metricClientError({ period, statistic: 'Sum' }),
    serverErrors: stage.metricServerError({ period, statistic: 'Sum' }),
    latencyTitle: 'API latency (ms)',
    latency: [
      stage.metricLatency({ period, statistic: 'p50' }),
      stage.metricLatency({ period, statistic: 'p99' }),
      stage.metricIntegrationLatency({ period, statistic: 'p99' }),
    ],
  };
}

/** The load balancer's own faults, which reach clients outside the controller's envelope. */
export interface LoadBalancerFaultMetrics {
  /** Connections refused because the load balancer had reached its maximum (`RejectedConnectionCount`). */
  readonly rejectedConnections: IMetric;
  /**
   * Invocations of a Lambda target that failed (`LambdaUserError`: the function could not run, was throttled or
   * answered what is not a response; `LambdaInternalError`: Elastic Load Balancing's own), each a 502 to the client.
   */
  readonly targetErrors: IMetric;
}

/** The load balancer's metrics, its own answers and the functions' added up as API Gateway's stage metrics are. */
export function loadBalancerMetrics(
  loadBalancer: IApplicationLoadBalancer,
  period: Duration,
): FrontDoorMetrics & LoadBalancerFaultMetrics {
  const { metrics } = loadBalancer;
  const sum = { period, statistic: 'Sum' } as const;
  // The ids name what each term counts: ids shared by two different metrics in one graph are refused.
  const added = (label: string, own: IMetric, targets: IMetric) => {
    const id = label.replace(/\W/g, '').toLowerCase();
    return new MathExpression({
      expression: `elb${id} + targets${id}`,
      usingMetrics: { [`elb${id}`]: own, [`targets${id}`]: targets },
      period,
      label,
    });
  };
  return {
    requests: metrics.requestCount(sum),
    clientErrors: added(
      '4xx',
      metrics.httpCodeElb(HttpCodeElb.ELB_4XX_COUNT, sum),
      metrics.httpCodeTarget(HttpCodeTarget.TARGET_4XX_COUNT, sum),
    ),
    serverErrors: added(
      '5xx',
      metrics.httpCodeElb(HttpCodeElb.ELB_5XX_COUNT, sum),
      metrics.httpCodeTarget(HttpCodeTarget.TARGET_5XX_COUNT, sum),
    ),
    latencyTitle: 'API latency (s, the functions answering)',
    latency: [
      metrics.targetResponseTime({ period, statistic: 'p50' }),
      metrics.targetResponseTime({ period, statistic: 'p99' }),
    ],
    rejectedConnections: metrics.rejectedConnectionCount(sum),
    targetErrors: new MathExpression({
      expression: 'user + internal',
      usingMetrics: {
        user: metrics.custom('LambdaUserError', sum),
        internal: metrics.custom('LambdaInternalError', sum),
      },
      period,
      label: 'Lambda target errors',
    }),
  };
}
