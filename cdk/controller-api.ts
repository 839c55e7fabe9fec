import { type Acknowledgment, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { CORS_ALLOWED_HEADERS, CORS_ALLOWED_METHODS, CORS_MAX_AGE_SECONDS } from '#shared/http/cors.ts';
import { resourcesOf } from '#shared/routes/resource-paths.ts';
import type { OperationGroup, Route } from '#shared/routes/route.ts';
import { REQUEST_DEADLINE } from './controller-function.ts';
import { addGatewayErrorResponses } from './gateway-error-responses.ts';

export interface ControllerApiProps {
  readonly routes: readonly Route[];
  /** The function that serves each operation group of `routes`. */
  readonly functions: ReadonlyMap<OperationGroup, IFunction>;
  /** Stage-wide throttling: steady requests per second, and how many more may arrive at once. */
  readonly throttling: { readonly rateLimit: number; readonly burstLimit: number };
}

const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: AccessLogField.contextRequestId(),
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
    errorType: AccessLogField.contextErrorResponseType(),
    errorMessage: AccessLogField.contextErrorMessage(),
  }),
);

const IN_HANDLER_AUTHORIZATION_REASON =
  "Authorization is the controller's own, in the functions: the zt-session token, partial (MFA-pending) sessions " +
  'and admin checks are state in the table that API Gateway and Cognito authorizers know nothing of, and some ' +
  'routes (authenticate, enroll, version) must be open.';

const IN_HANDLER_AUTHORIZATION: Acknowledgment[] = ['AwsSolutions-APIG4', 'AwsSolutions-COG4'].map((id) => ({
  id,
  reason: IN_HANDLER_AUTHORIZATION_REASON,
}));

/**
 * The REST API, built from the route table: every route is a method on each resource `resourcesOf` gives it, proxied
 * to its group's function. Authentication happens in the functions (API sessions live in DynamoDB), so every method
 * is open to API Gateway.
 */
export class ControllerApi extends Construct {
  readonly restApi: RestApi;

  constructor(scope: Construct, id: string, props: ControllerApiProps) {
    super(scope, id);

    // Who called what, kept past the stack's deletion for audits.
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.restApi = new RestApi(this, 'RestApi', {
      restApiName: `${Stack.of(this).stackName}-api`,
      description: 'OpenZiti Edge client and management APIs',
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      // Browser clients (the admin console) call from other origins; preflights are answered by API Gateway itself.
      defaultCorsPreflightOptions: {
        allowOrigins: ['*'],
        allowMethods: [...CORS_ALLOWED_METHODS],
        allowHeaders: [...CORS_ALLOWED_HEADERS],
        maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
      },
      // Stage logging needs the region's one API Gateway CloudWatch role; kept on deletion because other APIs in the
      // account may rely on it by then.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      deployOptions: {
        stageName: 'prod',
        metricsEnabled: true,
        // Errors only, and never request or response bodies: they carry passwords, tokens and private keys.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: ACCESS_LOG_FORMAT,
        tracingEnabled: true,
        throttlingRateLimit: props.throttling.rateLimit,
        throttlingBurstLimit: props.throttling.burstLimit,
      },
    });
    addGatewayErrorResponses(this.restApi);
    Validations.of(this.restApi).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'The functions validate every body and parameter with the zod schemas of the API and answer 400 ' +
        '`COULD_NOT_VALIDATE` with the field at fault, as OpenZiti clients expect; API Gateway validation would ' +
        'duplicate those schemas as models and answer in its own shape.',
    });
    Validations.of(this.restApi.node.findChild('CloudWatchRole')).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason:
        "The region's one API Gateway logging role, shared by every REST API of the account: AWS keeps its managed " +
        "policy in step with what API Gateway writes, and a policy narrowed to this API's log groups would cut off " +
        "the others' logs.",
    });

    // One integration per function, each granting API Gateway one API-wide invoke permission: a permission per
    // method would outgrow the function's 20 KB resource policy long before the route table is complete.
    const integrations = new Map<OperationGroup, LambdaIntegration>();
    for (const [group, fn] of props.functions) {
      integrations.set(group, new LambdaIntegration(fn, { scopePermissionToMethod: false, timeout: REQUEST_DEADLINE }));
    }

    const resourceGroups = new Map<string, OperationGroup>();
    for (const route of props.routes) {
      const integration = integrations.get(route.group);
      if (!integration) throw new Error(`No function serves group "${route.group}" (${route.method} ${route.path})`);
      for (const { resource } of resourcesOf(route)) {
        const method = this.restApi.root
          .resourceForPath(resource)
          .addMethod(route.method, integration, { operationName: route.operation });
        Validations.of(method).acknowledge(...IN_HANDLER_AUTHORIZATION);
        if (!resourceGroups.has(resource)) resourceGroups.set(resource, route.group);
      }
    }
    // Every served resource also takes ANY other method, to a function that answers 405 METHOD_NOT_ALLOWED in the
    // API's envelope; without it API Gateway answers its own 403, which could not be told from an unknown path.
    for (const [resource, group] of resourceGroups) {
      const method = this.restApi.root.resourceForPath(resource).addMethod('ANY', integrations.get(group));
      Validations.of(method).acknowledge(...IN_HANDLER_AUTHORIZATION);
    }
  }
}
