import { type CfnElement, Fn, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  ApiDefinition,
  EndpointType,
  LogGroupLogDestination,
  type MethodDeploymentOptions,
  MethodLoggingLevel,
  SpecRestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { loginResources } from '#shared/rate-limit/login-routes.ts';
import type { OperationGroup, Route } from '#shared/routes/route.ts';
import { keptAs, type LogGroupKeeping, REQUEST_DEADLINE } from './controller-function.ts';
import { loginThrottling, type Throttle } from './login-throttling.ts';
import { type RestApiDefinition, restApiDefinition } from './rest-api-definition.ts';

export interface ControllerApiProps {
  readonly routes: readonly Route[];
  /** What serves each operation group of `routes`: its function's `live` alias. */
  readonly functions: ReadonlyMap<OperationGroup, IFunction>;
  /** The stage, named after the environment (`prod`): it is in the stage URL (`…/prod/edge/client/v1`). */
  readonly stageName: string;
  /**
   * Whether to set the account's API Gateway CloudWatch Logs role (one per account and region, shared by every REST
   * API there). Off by default: another stack or the account's baseline usually owns it, and two stacks that each set
   * it overwrite each other; stage logging needs it set once (docs/aws.md, the settings).
   */
  readonly cloudWatchRole?: boolean;
  /** Per-method CloudWatch metrics of the stage; off by default (see {@link ControllerApi}). */
  readonly detailedMetrics?: boolean;
  /** How long the access logs are kept; three months by default. */
  readonly accessLogRetention?: RetentionDays;
  /** The access logs' key, and whether they outlive the stack (by default they do, unencrypted by a key of ours). */
  readonly accessLogKeeping?: LogGroupKeeping;
  /** Stage-wide throttling: steady requests per second, and how many more may arrive at once. */
  readonly throttling: Throttle;
  /**
   * Throttling of each credential-checking method (authenticate, enroll), all clients together, sized for the fleet
   * (`loginThrottling`): an enrollment flood from many addresses stops here, so the rest of the API keeps serving.
   */
  readonly loginThrottling?: Throttle;
}

/** Method throttling for each login resource, keyed as `deployOptions.methodOptions` wants (`/<path>/<METHOD>`). */
function loginMethodOptions(routes: readonly Route[], throttling: Throttle): Record<string, MethodDeploymentOptions> {
  return Object.fromEntries(
    loginResources(routes).map(({ resource, method }) => [
      `${resource}/${method}`,
      { throttlingRateLimit: throttling.rateLimit, throttlingBurstLimit: throttling.burstLimit },
    ]),
  );
}

/**
 * One JSON line per request. The ids find the request everywhere: `requestId` is the one error bodies and the
 * function's logs carry, `lambdaRequestId` the function invocation's (Lambda's own log lines), `xrayTraceId` the trace.
 */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: AccessLogField.contextRequestId(),
    extendedRequestId: AccessLogField.contextExtendedRequestId(),
    lambdaRequestId: AccessLogField.contextAwsEndpointRequestId(),
    xrayTraceId: AccessLogField.contextXrayTraceId(),
    requestTime: AccessLogField.contextRequestTime(),
    sourceIp: AccessLogField.contextIdentitySourceIp(),
    userAgent: AccessLogField.contextIdentityUserAgent(),
    httpMethod: AccessLogField.contextHttpMethod(),
    resourcePath: AccessLogField.contextResourcePath(),
    path: AccessLogField.contextPath(),
    protocol: AccessLogField.contextProtocol(),
    status: AccessLogField.contextStatus(),
    responseLength: AccessLogField.contextResponseLength(),
    responseLatency: AccessLogField.contextResponseLatency(),
    integrationLatency: AccessLogField.contextIntegrationLatency(),
    integrationStatus: AccessLogField.contextIntegrationStatus(),
    integrationError: AccessLogField.contextIntegrationErrorMessage(),
    errorType: AccessLogField.contextErrorResponseType(),
    errorMessage: AccessLogField.contextErrorMessage(),
  }),
);

/**
 * The REST API, built from the route table as one OpenAPI body (see `restApiDefinition`): every route is a method on
 * each resource `resourcesOf` gives it, proxied to its group's function.
 *
 * Authentication happens in the functions, so every method is open to API Gateway: the zt-session token, partial
 * (MFA-pending) sessions and admin checks are state in the table that API Gateway and Cognito authorizers know
 * nothing of, and some routes (authenticate, enroll, version) must be open. Which ones, and why, is
 * `ANONYMOUS_OPERATIONS`; cdk-nag cannot see the body's methods, so a test checks the rest answer 401.
 */
export class ControllerApi extends Construct {
  readonly restApi: SpecRestApi;
  /** The body the REST API is imported from, tokens unresolved. */
  readonly definition: RestApiDefinition;

  /**
   * Says why the stage has no web ACL, when the deployment turned the controller's own off (`firewall: false`): the
   * operator's firewall fronts it instead.
   */
  acknowledgeNoFirewall(): void {
    Validations.of(this.restApi.deploymentStage).acknowledge({
      id: 'AwsSolutions-APIG3',
      reason:
        "The deployment turned the controller's web ACL off (`firewall: false`), which its documentation allows only " +
        'where another firewall fronts the API (a web ACL of the organization, a CloudFront distribution); stage ' +
        "throttling and the functions' login limits still apply.",
    });
  }

  constructor(scope: Construct, id: string, props: ControllerApiProps) {
    super(scope, id);

    // Who called what, for audits: kept past the stack's deletion unless the stack says otherwise (outside production).
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: props.accessLogRetention ?? RetentionDays.THREE_MONTHS,
      ...keptAs({ retain: true, ...props.accessLogKeeping }),
    });

    const restApiName = `${Stack.of(this).stackName}-api`;
    this.definition = restApiDefinition(props.routes, {
      title: restApiName,
      integrationUriOf: (group) => {
        const fn = props.functions.get(group);
        if (!fn) throw new Error(`No function serves group "${group}"`);
        // One Fn::Sub string naming the alias's ARN (its Ref) by logical id: as a Fn::Join of tokens each of the ~400
        // operations would take four times the room in the template.
        const logicalId = Stack.of(this).getLogicalId(fn.node.defaultChild as CfnElement);
        return Fn.sub(
          `arn:\${AWS::Partition}:apigateway:\${AWS::Region}:lambda:path/2015-03-31/functions/\${${logicalId}}/invocations`,
        );
      },
      timeoutInMillis: REQUEST_DEADLINE.toMilliseconds(),
    });

    this.restApi = new SpecRestApi(this, 'RestApi', {
      restApiName,
      description: 'OpenZiti Edge client and management APIs, and the fabric API',
      apiDefinition: ApiDefinition.fromInline(this.definition),
      // Warnings are what API Gateway skipped while importing: a route it would silently not serve.
      failOnWarnings: true,
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      // Stage logging needs the region's one API Gateway CloudWatch role; when this stack sets it, it is kept on
      // deletion because other APIs in the account may rely on it by then.
      cloudWatchRole: props.cloudWatchRole === true,
      ...(props.cloudWatchRole === true ? { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN } : {}),
      deployOptions: {
        stageName: props.stageName,
        // Per-method metrics (Count, 4XX, 5XX, Latency for each resource and method) are custom metrics billed each
        // month, hundreds of them for this route table; the API-wide ones the alarms and dashboard use are sent
        // free whatever this says, and each operation group's function has its own errors and duration.
        metricsEnabled: props.detailedMetrics === true,
        // Errors only, and never request or response bodies: they carry passwords, tokens and private keys.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: ACCESS_LOG_FORMAT,
        tracingEnabled: true,
        throttlingRateLimit: props.throttling.rateLimit,
        throttlingBurstLimit: props.throttling.burstLimit,
        methodOptions: loginMethodOptions(props.routes, props.loginThrottling ?? loginThrottling()),
      },
    });
    Validations.of(this.restApi).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'The functions validate every body and parameter with the zod schemas of the API and answer 400 ' +
        '`COULD_NOT_VALIDATE` with the field at fault, as OpenZiti clients expect; API Gateway validation would ' +
        'duplicate those schemas as models and answer in its own shape.',
    });
    const cloudWatchRole = this.restApi.node.tryFindChild('CloudWatchRole');
    if (cloudWatchRole) {
      Validations.of(cloudWatchRole).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          "The region's one API Gateway logging role, shared by every REST API of the account: AWS keeps its managed " +
          "policy in step with what API Gateway writes, and a policy narrowed to this API's log groups would cut off " +
          "the others' logs.",
      });
    }

    // A changed body must make a new deployment, or the stage keeps serving the old routes: CDK names the
    // deployment after what is added here (tokens resolved at synthesis).
    this.restApi.latestDeployment?.addToLogicalId(this.definition);

    // One API-wide invoke permission per alias: a permission per method would outgrow the function's 20 KB resource
    // policy long before the route table is complete.
    for (const fn of props.functions.values()) {
      fn.addPermission('ApiGatewayInvoke', {
        principal: new ServicePrincipal('apigateway.amazonaws.com'),
        sourceArn: this.restApi.arnForExecuteApi('*', '/*', '*'),
      });
    }
  }
}
