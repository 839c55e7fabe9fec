import { ArnFormat, Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import type { IApplicationLoadBalancer } from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnLoggingConfiguration, CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import type { ErrorCode } from '#shared/errors/error-codes.ts';
import { CORS_RESPONSE_HEADERS } from '#shared/http/cors.ts';
import { API_VERSION_META } from '#shared/http/envelope.ts';
import { LOGIN_PATH_PATTERN } from '#shared/rate-limit/login-routes.ts';
import { keptAs, type LogGroupKeeping } from './controller-function.ts';

export interface ControllerFirewallProps {
  /** The API stage the web ACL guards (the REST API front door). */
  readonly stage?: Stage;
  /** The load balancer the web ACL guards (the load balancer front door). */
  readonly loadBalancer?: IApplicationLoadBalancer;
  /** Requests one client IP may send in any five minutes before it is answered 429. */
  readonly rateLimit: number;
  /** Login and enrollment requests one client IP may send in any five minutes. */
  readonly loginRateLimit?: number;
  /** How long the web ACL's log (what it blocked or counted) is kept; three months by default. */
  readonly logRetention?: RetentionDays;
  /** The log's key, and whether it outlives the stack (by default it does, unencrypted by a key of ours). */
  readonly logKeeping?: LogGroupKeeping;
}

/**
 * The request parts kept out of the web ACL's log: the API session token, external JWTs (`Authorization: Bearer`)
 * and the query string, which carries enrollment tokens (`POST /enroll?method=ott&token=…`). WAF can redact only the
 * whole query string, not one argument. Bodies are never logged by WAF.
 */
export const REDACTED_REQUEST_PARTS: CfnLoggingConfiguration.FieldToMatchProperty[] = [
  { singleHeader: { Name: 'zt-session' } },
  { singleHeader: { Name: 'authorization' } },
  { queryString: {} },
];

/** The window WAF counts each address's requests over, in seconds (its rate-based rules' longest). */
export const FIREWALL_WINDOW_SECONDS = 300;

/** WAF's name prefix for a CloudWatch Logs destination: it delivers to no other log group. */
export const WAF_LOG_GROUP_PREFIX = 'aws-waf-logs-';

/**
 * A backstop far above what one honest client needs (the functions' own per-address and per-username limits answer
 * first), low enough that a sprayer behind one address is cut off at the edge before it costs a function call.
 */
export const DEFAULT_FIREWALL_LOGIN_RATE_LIMIT = 1500;

/**
 * Rules of `AWSManagedRulesCommonRuleSet` that block requests the controller serves: they only count, so their
 * metrics still show how often they would have fired.
 */
const COUNTED_COMMON_RULES = [
  // PEM certificate chains (CAs, enrollments) and bulk bodies pass its 8 KB; the functions cap bodies at 1 MiB.
  'SizeRestrictions_BODY',
  // ZitiQL filters naming many ids pass its 2 KB of query string.
  'SizeRestrictions_QUERYSTRING',
  // Tunnelers and SDKs need not send a User-Agent.
  'NoUserAgent_HEADER',
  // Configs and external JWT signers carry URLs of IP addresses (`https://10.0.0.5/jwks`), which it takes for RFI.
  'GenericRFI_BODY',
] as const;

const RATE_LIMITED_BODY = 'rate-limited';
const LOGINS_LIMITED_BODY = 'logins-rate-limited';

function visibility(metricName: string): CfnWebACL.VisibilityConfigProperty {
  return { metricName, cloudWatchMetricsEnabled: true, sampledRequestsEnabled: true };
}

function awsManagedRuleGroup(name: string, priority: number, counted: readonly string[] = []): CfnWebACL.RuleProperty {
  return {
    name,
    priority,
    statement: {
      managedRuleGroupStatement: {
        vendorName: 'AWS',
        name,
        ...(counted.length > 0 && {
          ruleActionOverrides: counted.map((rule) => ({ name: rule, actionToUse: { count: {} } })),
        }),
      },
    },
    overrideAction: { none: {} },
    visibilityConfig: visibility(name),
  };
}

/**
 * A WAF web ACL on the API stage or the load balancer: AWS's IP reputation list, a per-IP rate limit, known bad inputs
 * (Log4Shell and the like) and the common rule set. Blocked requests get API Gateway's `WAF_FILTERED` gateway
 * response (behind the load balancer, WAF's own 403), except the rate limits', which answer 429 in the controller's
 * error envelope so that clients back off instead of failing.
 */
export class ControllerFirewall extends Construct {
  readonly webAcl: CfnWebACL;
  /** The web ACL's CloudWatch metric name (`WebACL` dimension of `AWS/WAFV2`), unique to the stack. */
  readonly metricName: string;
  /** The web ACL's log: each request it blocked or counted, without the parts {@link REDACTED_REQUEST_PARTS} names. */
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ControllerFirewallProps) {
    super(scope, id);

    // Named after the stack: web ACLs sharing a metric name would add up in one metric (two environments in a region).
    this.metricName = `${Stack.of(this).stackName}-api`;
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      description: 'Ziti controller API: managed rule groups and a per-IP rate limit',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(this.metricName),
      customResponseBodies: {
        [RATE_LIMITED_BODY]: {
          contentType: 'APPLICATION_JSON',
          // WAF answers before API Gateway has a request id, so the envelope has none.
          content: JSON.stringify({
            error: {
              code: 'RATE_LIMITED' satisfies ErrorCode,
              message: 'Too many requests from this address; try again later.',
            },
            meta: API_VERSION_META,
          }),
        },
        [LOGINS_LIMITED_BODY]: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify({
            error: {
              code: 'SERVER_TOO_MANY_REQUESTS' satisfies ErrorCode,
              message: 'Too many attempts; try again later.',
            },
            meta: API_VERSION_META,
          }),
        },
      },
      rules: [
        awsManagedRuleGroup('AWSManagedRulesAmazonIpReputationList', 0),
        {
          name: 'RateLimitPerIp',
          priority: 1,
          statement: {
            rateBasedStatement: {
              limit: props.rateLimit,
              evaluationWindowSec: FIREWALL_WINDOW_SECONDS,
              aggregateKeyType: 'IP',
            },
          },
          action: {
            block: {
              customResponse: {
                responseCode: 429,
                customResponseBodyKey: RATE_LIMITED_BODY,
                // Browsers hide the answer from cross-origin pages without these.
                responseHeaders: Object.entries(CORS_RESPONSE_HEADERS).map(([name, value]) => ({ name, value })),
              },
            },
          },
          visibilityConfig: visibility('RateLimitPerIp'),
        },
        awsManagedRuleGroup('AWSManagedRulesKnownBadInputsRuleSet', 2),
        awsManagedRuleGroup('AWSManagedRulesCommonRuleSet', 3, COUNTED_COMMON_RULES),
        {
          name: 'RateLimitLoginsPerIp',
          priority: 4,
          statement: {
            rateBasedStatement: {
              limit: props.loginRateLimit ?? DEFAULT_FIREWALL_LOGIN_RATE_LIMIT,
              evaluationWindowSec: FIREWALL_WINDOW_SECONDS,
              aggregateKeyType: 'IP',
              scopeDownStatement: {
                andStatement: {
                  statements: [
                    {
                      byteMatchStatement: {
                        fieldToMatch: { method: {} },
                        positionalConstraint: 'EXACTLY',
                        searchString: 'POST',
                        textTransformations: [{ priority: 0, type: 'NONE' }],
                      },
                    },
                    {
                      regexMatchStatement: {
                        fieldToMatch: { uriPath: {} },
                        regexString: LOGIN_PATH_PATTERN,
                        textTransformations: [{ priority: 0, type: 'NONE' }],
                      },
                    },
                  ],
                },
              },
            },
          },
          action: {
            block: {
              customResponse: {
                responseCode: 429,
                customResponseBodyKey: LOGINS_LIMITED_BODY,
                responseHeaders: [
                  ...Object.entries(CORS_RESPONSE_HEADERS).map(([name, value]) => ({ name, value })),
                  { name: 'Retry-After', value: '60' },
                ],
              },
            },
          },
          visibilityConfig: visibility('RateLimitLoginsPerIp'),
        },
      ],
    });

    if (props.stage) {
      new CfnWebACLAssociation(this, 'StageAssociation', {
        resourceArn: props.stage.stageArn,
        webAclArn: this.webAcl.attrArn,
      });
    }
    if (props.loadBalancer) {
      new CfnWebACLAssociation(this, 'LoadBalancerAssociation', {
        resourceArn: props.loadBalancer.loadBalancerArn,
        webAclArn: this.webAcl.attrArn,
      });
    }

    const stack = Stack.of(this);
    const logGroupName = `${WAF_LOG_GROUP_PREFIX}${stack.stackName}`;
    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName,
      retention: props.logRetention ?? RetentionDays.THREE_MONTHS,
      // What was refused, and from where, is evidence for after the stack is gone, as the API's access logs are.
      ...keptAs({ retain: true, ...props.logKeeping }),
    });
    const logging = new CfnLoggingConfiguration(this, 'Logging', {
      resourceArn: this.webAcl.attrArn,
      // WAF wants the log group's ARN without the `:*` the log group's own ARN attribute ends in. It adds the
      // log delivery's resource policy to the account's log groups itself.
      logDestinationConfigs: [
        stack.formatArn({
          service: 'logs',
          resource: 'log-group',
          resourceName: logGroupName,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      ],
      redactedFields: REDACTED_REQUEST_PARTS,
      // Allowed requests are in the API's access logs already; only what a rule blocked or counted is kept here.
      loggingFilter: {
        DefaultBehavior: 'DROP',
        Filters: [
          {
            Behavior: 'KEEP',
            Requirement: 'MEETS_ANY',
            Conditions: ['BLOCK', 'COUNT', 'EXCLUDED_AS_COUNT'].map((action) => ({
              ActionCondition: { Action: action },
            })),
          },
        ],
      },
    });
    logging.node.addDependency(this.logGroup);
  }
}
