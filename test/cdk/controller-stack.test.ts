import { App, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { LOGIN_PATH_PATTERN, loginResources } from '#shared/rate-limit/login-routes.ts';
import { OIDC_ROUTES } from '#shared/routes/groups/oidc-routes.ts';
import { resourcesOf } from '#shared/routes/resource-paths.ts';
import type { OperationGroup, Route } from '#shared/routes/route.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import { DEFAULT_FIREWALL_LOGIN_RATE_LIMIT, FIREWALL_WINDOW_SECONDS } from '../../cdk/controller-firewall.ts';
import { SECRET_GROUPS, SIGNING_GROUPS } from '../../cdk/controller-keys.ts';
import { DEFAULT_API_LIMITS } from '../../cdk/controller-settings.ts';
import { ControllerStack } from '../../cdk/controller-stack.ts';
import { functionMemoryMb } from '../../cdk/function-memory.ts';
import { GATEWAY_ERRORS } from '../../cdk/gateway-error-responses.ts';
import { ADDRESSES_TO_FILL_A_LOGIN_PATH, FLEET_LOGIN_SECONDS, loginThrottling } from '../../cdk/login-throttling.ts';
import { operationGroupsOf } from '../../cdk/operation-groups.ts';
import { specOperations } from '../contract/openziti-spec.ts';
import { cdkJsonContext } from './synth-context.ts';

interface CfnResource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
  readonly DeletionPolicy?: string;
}

type Intrinsic = { readonly Ref?: string; readonly 'Fn::GetAtt'?: readonly [string, string] };

interface Statement {
  readonly Action: string | string[];
  readonly Resource: unknown;
}

type PolicyDocument = { readonly Statement: Statement[] };

// Bundling skipped for every stack: the template does not depend on the bundle, and esbuild would dominate the run.
const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
const stack = new ControllerStack(app, 'TestController', { adminUsername: 'admin', apiSessionTimeoutMinutes: 30 });
const template = Template.fromStack(stack);
const resources = (template.toJSON() as { Resources: Record<string, CfnResource> }).Resources;

function resourceById(logicalId: string | undefined): CfnResource {
  const resource = logicalId === undefined ? undefined : resources[logicalId];
  if (!resource) throw new Error(`no resource ${logicalId}`);
  return resource;
}

function resourcesOfType(type: string): [string, CfnResource][] {
  return Object.entries(resources).filter(([, resource]) => resource.Type === type);
}

function onlyResourceOfType(type: string): [string, CfnResource] {
  const [only, ...others] = resourcesOfType(type);
  if (!only || others.length > 0) throw new Error(`expected exactly one ${type}`);
  return only;
}

/** The statements a role holds: its inline policies and the `AWS::IAM::Policy` resources attached to it. */
function statementsOfRole(roleId: string | undefined): Statement[] {
  const inline = (resourceById(roleId).Properties.Policies as { PolicyDocument: PolicyDocument }[] | undefined) ?? [];
  const attached = resourcesOfType('AWS::IAM::Policy')
    .filter(([, policy]) => (policy.Properties.Roles as Intrinsic[]).some((r) => r.Ref === roleId))
    .map(([, policy]) => policy.Properties.PolicyDocument as PolicyDocument);
  return [...inline.map((policy) => policy.PolicyDocument), ...attached].flatMap((document) => document.Statement);
}

const actionsOf = (statement: Statement): string[] => [statement.Action].flat();

function functionLogicalId(group: OperationGroup): string {
  const fn = stack.controller.functions.get(group);
  if (!fn) throw new Error(`no function for ${group}`);
  return stack.getLogicalId(fn.node.defaultChild as CfnElement);
}

/** The logical id of the `live` alias of a group's function: what API Gateway invokes. */
function aliasLogicalId(group: OperationGroup): string {
  const fn = stack.controller.functions.get(group);
  if (!fn) throw new Error(`no function for ${group}`);
  return stack.getLogicalId(fn.live.node.defaultChild as CfnElement);
}

/** The logical id of the alias a Lambda integration URI invokes: `{ "Fn::Sub": "…functions/${AliasId}/invocations" }`. */
function invokedFunction(uri: unknown): string | undefined {
  const sub = (uri as { 'Fn::Sub'?: unknown } | undefined)?.['Fn::Sub'];
  if (typeof sub !== 'string') return undefined;
  return /^arn:\$\{AWS::Partition\}:apigateway:\$\{AWS::Region\}:lambda:path\/2015-03-31\/functions\/\$\{(\w+)\}\/invocations$/.exec(
    sub,
  )?.[1];
}

interface BodyOperation {
  readonly parameters?: { name: string; in: string; required: boolean }[];
  readonly responses: Record<string, { headers?: Record<string, unknown> }>;
  readonly 'x-amazon-apigateway-integration': {
    type: string;
    uri?: unknown;
    timeoutInMillis?: number;
    responses?: Record<string, { statusCode: string; responseParameters: Record<string, string> }>;
  };
}

interface Body {
  readonly paths: Record<string, Record<string, BodyOperation>>;
  readonly 'x-amazon-apigateway-gateway-responses': Record<
    string,
    { statusCode: number; responseParameters: Record<string, string>; responseTemplates: Record<string, string> }
  >;
}

const [restApiId, restApi] = onlyResourceOfType('AWS::ApiGateway::RestApi');
/** The OpenAPI body the REST API is imported from, as it stands in the template. */
const body = restApi.Properties.Body as Body;

/** The function a request `method resource` reaches: the resource's own method, else its any-method. */
function servedBy(method: string, resource: string): { type: string; functionId?: string } | undefined {
  const operations = body.paths[resource];
  const operation = operations?.[method.toLowerCase()] ?? operations?.['x-amazon-apigateway-any-method'];
  if (!operation) return undefined;
  const integration = operation['x-amazon-apigateway-integration'];
  return { type: integration.type, functionId: invokedFunction(integration.uri) };
}

describe('ControllerStack', () => {
  describe('REST API', () => {
    it('serves every route at every resource of the route, proxied to the live alias of its group', () => {
      for (const route of ROUTES) {
        for (const { resource } of resourcesOf(route)) {
          expect(servedBy(route.method, resource), `${route.method} ${resource}`).toEqual({
            type: 'aws_proxy',
            functionId: aliasLogicalId(route.group),
          });
        }
      }
    });

    it("sends an SDK's poll, session refresh and logout to the poll function, at both base paths and bare", () => {
      const served: [string, string][] = [
        ['GET', '/edge/client/v1/current-api-session/service-updates'],
        ['GET', '/current-api-session/service-updates'],
        ...['/edge/client/v1', '/edge/management/v1', ''].flatMap((base) => [
          ['GET', `${base}/current-api-session`] as [string, string],
          ['DELETE', `${base}/current-api-session`] as [string, string],
        ]),
      ];
      for (const [method, resource] of served) {
        expect(servedBy(method, resource), `${method} ${resource}`).toEqual({
          type: 'aws_proxy',
          functionId: aliasLogicalId('poll'),
        });
      }
    });

    it("sends the fabric API's reads to the fabric function, under /fabric/v1 only", () => {
      for (const path of ['/routers', '/terminators', '/circuits', '/links', '/services']) {
        for (const resource of [`/fabric/v1${path}`, `/fabric/v1${path}/{id}`]) {
          expect(servedBy('GET', resource), resource).toEqual({
            type: 'aws_proxy',
            functionId: aliasLogicalId('fabric'),
          });
        }
      }
      expect(body.paths['/links']).toBeUndefined();
      expect(body.paths['/edge/management/v1/links']).toBeUndefined();
    });

    it('has no resource the route table does not ask for', () => {
      const expected = new Set(ROUTES.flatMap((route) => resourcesOf(route).map(({ resource }) => resource)));
      expect(Object.keys(body.paths).sort()).toEqual([...expected].sort());
    });

    it('sends any other method of a served resource to a function, so it answers 405 in the envelope', () => {
      for (const [resource, operations] of Object.entries(body.paths)) {
        expect(servedBy('PUT', resource)?.type, resource).toBe('aws_proxy');
        expect(operations['x-amazon-apigateway-any-method'], resource).toBeDefined();
      }
    });

    it('serves the un-prefixed alias of the base path at the REST API root', () => {
      const root = ROUTES.find((route) => route.path === '/' && route.apis.includes('client'));
      expect(root).toBeDefined();
      expect(servedBy(root?.method ?? 'GET', '/')).toEqual({
        type: 'aws_proxy',
        functionId: aliasLogicalId(root?.group ?? 'info'),
      });
    });

    it('declares every path parameter of a resource on each of its operations', () => {
      for (const [resource, operations] of Object.entries(body.paths)) {
        const names = [...resource.matchAll(/\{([^}]+)\}/g)].map(([, name]) => name);
        for (const [method, operation] of Object.entries(operations)) {
          if (method === 'options') continue;
          expect(
            (operation.parameters ?? []).map((p) => [p.name, p.in, p.required]),
            `${method} ${resource}`,
          ).toEqual(names.map((name) => [name, 'path', true]));
        }
      }
    });

    it('never gives a resource two differently named path parameters as children (API Gateway rejects that)', () => {
      const parameterChildren = new Map<string, Set<string>>();
      for (const resource of Object.keys(body.paths)) {
        const parts = resource.split('/').filter(Boolean);
        parts.forEach((part, i) => {
          if (!part.startsWith('{')) return;
          const parent = `/${parts.slice(0, i).join('/')}`;
          parameterChildren.set(parent, (parameterChildren.get(parent) ?? new Set()).add(part));
        });
      }
      for (const [parent, names] of parameterChildren) expect([...names], parent).toHaveLength(1);
    });

    it('redeploys the stage when the body changes (the deployment is named after the body)', () => {
      const deploymentIdWith = (routes: readonly Route[]): string | undefined => {
        const other = new ControllerStack(
          new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } }),
          'TestController',
          { adminUsername: 'admin', apiSessionTimeoutMinutes: 30, routes },
        );
        const otherResources = Template.fromStack(other).toJSON().Resources as Record<string, CfnResource>;
        return Object.keys(otherResources).find((id) => otherResources[id]?.Type === 'AWS::ApiGateway::Deployment');
      };
      const sameId = deploymentIdWith(ROUTES);
      const fewerId = deploymentIdWith(ROUTES.slice(1));
      const [deploymentId] = onlyResourceOfType('AWS::ApiGateway::Deployment');
      expect(sameId).toBe(deploymentId);
      expect(fewerId).toBeDefined();
      expect(fewerId).not.toBe(deploymentId);
    });

    it('grants API Gateway one API-wide invoke permission per alias rather than one per method', () => {
      const permissions = resourcesOfType('AWS::Lambda::Permission');
      const functionCount = resourcesOfType('AWS::Lambda::Function').length;
      expect(permissions.length).toBeLessThanOrEqual(2 * functionCount);
      for (const group of operationGroupsOf(ROUTES)) {
        const own = permissions.filter(
          ([, p]) => (p.Properties.FunctionName as Intrinsic).Ref === aliasLogicalId(group),
        );
        expect(own, group).toHaveLength(1);
        expect(own[0]?.[1].Properties).toMatchObject({
          Action: 'lambda:InvokeFunction',
          Principal: 'apigateway.amazonaws.com',
          SourceArn: { 'Fn::Join': ['', expect.arrayContaining([{ Ref: restApiId }])] },
        });
      }
    });

    it('answers API Gateway errors in the controller error envelope', () => {
      const responses = body['x-amazon-apigateway-gateway-responses'];
      for (const { type, code } of GATEWAY_ERRORS) {
        expect(responses[type]?.responseTemplates['application/json'], type).toMatch(`"code":"${code}"`);
      }
      const statuses = Object.entries(responses).map(([type, r]) => ({
        type,
        status: r.statusCode,
        body: JSON.parse(r.responseTemplates['application/json']!),
      }));
      expect(statuses).toContainEqual(
        expect.objectContaining({
          type: 'MISSING_AUTHENTICATION_TOKEN',
          status: 404,
          body: {
            error: { code: 'NOT_FOUND', message: expect.any(String), requestId: '$context.requestId' },
            meta: { apiVersion: '0.0.1', apiEnrollmentVersion: '0.0.1' },
          },
        }),
      );
      expect(statuses).toContainEqual(expect.objectContaining({ type: 'REQUEST_TOO_LARGE', status: 413 }));
      expect(statuses).toContainEqual(expect.objectContaining({ type: 'INTEGRATION_TIMEOUT', status: 503 }));
      expect(statuses).toContainEqual(expect.objectContaining({ type: 'WAF_FILTERED', status: 400 }));
      // Declared in the body, not as resources of their own that CloudFormation says would drift from it.
      expect(resourcesOfType('AWS::ApiGateway::GatewayResponse')).toEqual([]);
    });

    it('answers CORS preflights on every resource in API Gateway, and lets browsers read its own errors', () => {
      for (const [resource, operations] of Object.entries(body.paths)) {
        const preflight = operations.options;
        expect(preflight?.['x-amazon-apigateway-integration'].type, resource).toBe('mock');
        const answer = preflight?.['x-amazon-apigateway-integration'].responses?.default;
        expect(answer?.statusCode).toBe('204');
        expect(answer?.responseParameters).toMatchObject({
          'method.response.header.access-control-allow-origin': "'*'",
          'method.response.header.access-control-allow-methods': "'GET, POST, PUT, PATCH, DELETE'",
          'method.response.header.access-control-allow-headers': expect.stringContaining('zt-session'),
        });
        // A mapped header must be declared on the method response, or API Gateway refuses the import.
        const declared = Object.keys(preflight?.responses['204']?.headers ?? {});
        for (const parameter of Object.keys(answer?.responseParameters ?? {})) {
          expect(declared).toContain(parameter.replace('method.response.header.', ''));
        }
      }
      for (const [type, response] of Object.entries(body['x-amazon-apigateway-gateway-responses'])) {
        expect(response.responseParameters, type).toMatchObject({
          'gatewayresponse.header.access-control-allow-origin': "'*'",
        });
      }
    });

    it('times integrations out at the 10 s API deadline', () => {
      for (const operations of Object.values(body.paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          if (method === 'options') continue; // CORS preflights are answered by API Gateway.
          expect(operation['x-amazon-apigateway-integration'].timeoutInMillis).toBe(10_000);
        }
      }
    });

    it('fails the import on any warning, so a route API Gateway skipped cannot deploy silently', () => {
      expect(restApi.Properties.FailOnWarnings).toBe(true);
    });

    it('deploys a regional API with access logs, without request body logging or per-method metrics', () => {
      template.hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointConfiguration: { Types: ['REGIONAL'] } });
      template.hasResourceProperties('AWS::ApiGateway::Stage', {
        StageName: 'prod',
        MethodSettings: Match.arrayWith([Match.objectLike({ DataTraceEnabled: false, MetricsEnabled: false })]),
      });
    });

    it("logs each request's ids: API Gateway's (the error body's), the Lambda invocation's and the X-Ray trace's", () => {
      const [stage] = Object.values(template.findResources('AWS::ApiGateway::Stage'));
      const format = JSON.parse(
        (stage as { Properties: { AccessLogSetting: { Format: string } } }).Properties.AccessLogSetting.Format,
      ) as Record<string, string>;
      expect(format).toMatchObject({
        requestId: '$context.requestId',
        extendedRequestId: '$context.extendedRequestId',
        lambdaRequestId: '$context.awsEndpointRequestId',
        xrayTraceId: '$context.xrayTraceId',
        status: '$context.status',
        integrationStatus: '$context.integrationStatus',
        integrationError: '$context.integrationErrorMessage',
      });
    });

    it('traces requests with X-Ray and throttles the whole stage', () => {
      template.hasResourceProperties('AWS::ApiGateway::Stage', {
        TracingEnabled: true,
        MethodSettings: Match.arrayWith([
          Match.objectLike({
            HttpMethod: '*',
            ResourcePath: '/*',
            ThrottlingRateLimit: DEFAULT_API_LIMITS.apiRateLimit,
            ThrottlingBurstLimit: DEFAULT_API_LIMITS.apiBurstLimit,
          }),
        ]),
      });
    });

    it('puts the stage behind a web ACL of AWS managed rule groups and a per-IP rate limit that answers 429', () => {
      const [webAclId, webAcl] = onlyResourceOfType('AWS::WAFv2::WebACL');
      const rules = webAcl.Properties.Rules as { Name: string; Statement: Record<string, unknown> }[];
      expect(webAcl.Properties).toMatchObject({ Scope: 'REGIONAL', DefaultAction: { Allow: {} } });
      expect(rules.map((rule) => rule.Name)).toEqual(
        expect.arrayContaining([
          'AWSManagedRulesAmazonIpReputationList',
          'AWSManagedRulesKnownBadInputsRuleSet',
          'AWSManagedRulesCommonRuleSet',
        ]),
      );

      const rateLimit = rules.find((rule) => 'RateBasedStatement' in rule.Statement);
      expect(rateLimit).toMatchObject({
        Statement: { RateBasedStatement: { AggregateKeyType: 'IP', Limit: DEFAULT_API_LIMITS.firewallRateLimit } },
        Action: { Block: { CustomResponse: { ResponseCode: 429, CustomResponseBodyKey: 'rate-limited' } } },
      });
      const bodies = webAcl.Properties.CustomResponseBodies as Record<string, { Content: string }>;
      expect(JSON.parse(bodies['rate-limited']!.Content)).toMatchObject({ error: { code: 'RATE_LIMITED' } });

      const [stageId] = onlyResourceOfType('AWS::ApiGateway::Stage');
      const [, association] = onlyResourceOfType('AWS::WAFv2::WebACLAssociation');
      expect(association.Properties.WebACLArn).toEqual({ 'Fn::GetAtt': [webAclId, 'Arn'] });
      expect(association.Properties.ResourceArn).toEqual({
        'Fn::Join': ['', expect.arrayContaining(['/stages/', { Ref: stageId }])],
      });
    });

    it('gives every function the OIDC settings from its props', () => {
      const oidc = new ControllerStack(
        new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } }),
        'OidcController',
        {
          adminUsername: 'admin',
          apiSessionTimeoutMinutes: 30,
          oidcAuth: true,
          oidcAccessTokenSeconds: 600,
          oidcRefreshTokenSeconds: 7200,
        },
      );
      const functions = Template.fromStack(oidc).findResources('AWS::Lambda::Function', {
        Properties: { Environment: { Variables: { API_SESSION_TIMEOUT_MINUTES: '30' } } },
      });
      expect(Object.keys(functions).length).toBe(oidc.controller.functions.size);
      for (const fn of Object.values(functions)) {
        expect(fn.Properties.Environment.Variables).toMatchObject({
          OIDC_AUTH: 'true',
          OIDC_ACCESS_TOKEN_SECONDS: '600',
          OIDC_REFRESH_TOKEN_SECONDS: '7200',
        });
      }
    });

    it('takes the throttling and firewall limits from its props', () => {
      const limited = new ControllerStack(
        new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } }),
        'LimitedController',
        {
          adminUsername: 'admin',
          apiSessionTimeoutMinutes: 30,
          apiRateLimit: 20,
          apiBurstLimit: 40,
          firewallRateLimit: 300,
        },
      );
      const limitedTemplate = Template.fromStack(limited);
      limitedTemplate.hasResourceProperties('AWS::ApiGateway::Stage', {
        MethodSettings: Match.arrayWith([
          Match.objectLike({ ResourcePath: '/*', ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 }),
        ]),
      });
      limitedTemplate.hasResourceProperties('AWS::WAFv2::WebACL', {
        Rules: Match.arrayWith([
          Match.objectLike({ Statement: { RateBasedStatement: Match.objectLike({ Limit: 300 }) } }),
        ]),
      });
    });
  });

  describe('functions', () => {
    const groups = operationGroupsOf(ROUTES);

    it("gives the fleet's functions the memory the bench chose, the others 1,024 MB", () => {
      const memoryOf = (group: string) => resourceById(functionLogicalId(group as never)).Properties.MemorySize;
      expect([memoryOf('poll'), memoryOf('client'), memoryOf('sessions'), memoryOf('authentication')]).toEqual([
        256, 512, 512, 1024,
      ]);
      expect(memoryOf('identities')).toBe(1024);
    });

    it('has exactly one Node 24 arm64 ESM function per operation group', () => {
      expect([...stack.controller.functions.keys()]).toEqual(groups);
      const ids = groups.map(functionLogicalId);
      expect(new Set(ids).size).toBe(groups.length);
      for (const [index, id] of ids.entries()) {
        expect(resourceById(id).Properties).toMatchObject({
          Runtime: 'nodejs24.x',
          Architectures: ['arm64'],
          Handler: 'index.handler',
          // The size the bench chose for the group (cdk/function-memory.ts): the fleet's client and sessions at 512.
          MemorySize: functionMemoryMb(groups[index]!),
          TracingConfig: { Mode: 'Active' },
          // Lambda's START, END and REPORT lines left out; every line of the code's own kept, EMF included.
          LoggingConfig: { LogFormat: 'JSON', SystemLogLevel: 'WARN', ApplicationLogLevel: 'INFO' },
          Environment: {
            Variables: {
              TABLE_NAME: { Ref: stack.getLogicalId(stack.controller.table.node.defaultChild as CfnElement) },
              API_SESSION_TIMEOUT_MINUTES: '30',
              JWKS_ALLOW_PRIVATE_IPS: 'false',
              // OIDC served but not offered by `/version`, with the controller's default lifetimes.
              OIDC_AUTH: 'false',
              OIDC_ACCESS_TOKEN_SECONDS: '1800',
              OIDC_REFRESH_TOKEN_SECONDS: '86400',
              // One successful read in a hundred gets its summary line.
              REQUEST_LOG_SAMPLE_RATE: '100',
              NODE_OPTIONS: '--enable-source-maps',
            },
          },
        });
      }
    });

    it("sets Powertools' service (the stack), metrics namespace and log level on every controller function", () => {
      const controllerFunctions = resourcesOfType('AWS::Lambda::Function').filter(
        ([, fn]) => fn.Properties.Handler === 'index.handler',
      );
      // One per group, the bootstrap, the integrity scan's and the ended sessions' sweep.
      expect(controllerFunctions).toHaveLength(groups.length + 3);
      for (const [, fn] of controllerFunctions) {
        expect((fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject({
          POWERTOOLS_SERVICE_NAME: 'TestController',
          POWERTOOLS_METRICS_NAMESPACE: 'ZitiController',
          POWERTOOLS_LOG_LEVEL: 'INFO',
          POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
        });
        expect(fn.Properties.LoggingConfig).toMatchObject({ SystemLogLevel: 'WARN', ApplicationLogLevel: 'INFO' });
      }
    });

    it('gives every controller function a log group of its own', () => {
      const controllerFunctions = resourcesOfType('AWS::Lambda::Function').filter(
        ([, fn]) => fn.Properties.Handler === 'index.handler',
      );
      // One per group, the bootstrap, the integrity scan's and the ended sessions' sweep.
      expect(controllerFunctions).toHaveLength(groups.length + 3);
      const logGroups = controllerFunctions.map(
        ([, fn]) => (fn.Properties.LoggingConfig as { LogGroup: Intrinsic }).LogGroup.Ref,
      );
      expect(new Set(logGroups).size).toBe(controllerFunctions.length);
      for (const logGroup of logGroups) expect(resourceById(logGroup).Type).toBe('AWS::Logs::LogGroup');
    });

    it('lets a group function read and write DynamoDB, send traces and write its own log group, nothing more', () => {
      for (const group of groups) {
        const fn = resourceById(functionLogicalId(group));
        const statements = statementsOfRole((fn.Properties.Role as Intrinsic)['Fn::GetAtt']?.[0]);
        const actions = statements.flatMap(actionsOf);
        // Reads and single-item writes on the table, no scan (what each group's operations send, operation-groups.ts).
        expect(new Set(actions.filter((action) => action.startsWith('dynamodb:'))), group).toEqual(
          new Set([
            'dynamodb:GetItem',
            'dynamodb:BatchGetItem',
            'dynamodb:Query',
            'dynamodb:PutItem',
            'dynamodb:UpdateItem',
            'dynamodb:DeleteItem',
            'dynamodb:ConditionCheckItem',
            // The database group backs the table up (controller-integrity.test.ts checks on what).
            ...(group === 'database' ? ['dynamodb:CreateBackup'] : []),
          ]),
        );
        // Signing with the PKI keys is granted to the signing groups only, sealing secrets to the secret groups
        // (controller-keys.test.ts checks which keys).
        expect(new Set(actions.filter((action) => action.startsWith('kms:'))), group).toEqual(
          new Set([
            ...(SIGNING_GROUPS[group]?.some((role) => role !== 'server') ? ['kms:GetPublicKey', 'kms:Sign'] : []),
            // The server key's secret is decrypted through Secrets Manager by the groups that sign JWTs.
            ...(SIGNING_GROUPS[group]?.includes('server') ? ['kms:Decrypt'] : []),
            ...(SECRET_GROUPS.includes(group) ? ['kms:Decrypt', 'kms:GenerateDataKey'] : []),
          ]),
        );
        expect(actions.filter((action) => !/^(dynamodb|kms):/.test(action)).sort(), group).toEqual([
          'logs:CreateLogStream',
          'logs:PutLogEvents',
          // The database group starts integrity runs (controller-integrity.test.ts checks on what).
          ...(group === 'database' ? ['states:StartExecution'] : []),
          // The pki group publishes the mTLS truststore (controller-mtls-domain.test.ts checks on what).
          ...(group === 'pki' ? ['s3:GetObject', 's3:GetObjectVersion', 's3:PutObject'] : []),
          ...(SIGNING_GROUPS[group]?.includes('server')
            ? ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue']
            : []),
          'xray:PutTelemetryRecords',
          'xray:PutTraceSegments',
        ]);
        const logGroup = (fn.Properties.LoggingConfig as { LogGroup: Intrinsic }).LogGroup.Ref;
        const logs = statements.filter((statement) =>
          actionsOf(statement).some((action) => action.startsWith('logs:')),
        );
        expect(
          logs.map((statement) => statement.Resource),
          group,
        ).toEqual([{ 'Fn::GetAtt': [logGroup, 'Arn'] }]);
      }
    });

    it('lets only the integrity scan scan the whole table or batch-write, and no role describe it or read its streams', () => {
      const scanners = resourcesOfType('AWS::IAM::Role')
        .filter(([role]) =>
          statementsOfRole(role)
            .flatMap(actionsOf)
            .some((action) => ['dynamodb:Scan', 'dynamodb:BatchWriteItem', 'dynamodb:*'].includes(action)),
        )
        .map(([role]) => role);
      const integrityRole = stack.getLogicalId(
        stack.controller.integrity!.function.role!.node.defaultChild as CfnElement,
      );
      expect(scanners).toEqual([integrityRole]);
      const integrityActions = statementsOfRole(integrityRole).flatMap(actionsOf);
      expect(integrityActions).toEqual(expect.arrayContaining(['dynamodb:Scan', 'dynamodb:BatchWriteItem']));
      for (const [role] of resourcesOfType('AWS::IAM::Role')) {
        const unused = statementsOfRole(role)
          .flatMap(actionsOf)
          .filter((action) =>
            /^dynamodb:(DescribeTable|GetRecords|GetShardIterator|DescribeStream|ListStreams)$/.test(action),
          );
        expect(unused, role).toEqual([]);
      }
    });

    it('gives no function an AWS managed policy, and grants nothing on `*` but X-Ray', () => {
      const functionRoles = resourcesOfType('AWS::Lambda::Function').map(
        ([, fn]) => (fn.Properties.Role as Intrinsic)['Fn::GetAtt']?.[0],
      );
      for (const role of functionRoles) expect(resourceById(role).Properties.ManagedPolicyArns, role).toBeUndefined();
      for (const [role] of resourcesOfType('AWS::IAM::Role')) {
        for (const statement of statementsOfRole(role)) {
          if (![statement.Resource].flat().includes('*')) continue;
          // Step Functions delivers its logs through CloudWatch Logs' vended delivery, whose actions take no ARN.
          if (role.startsWith('IntegrityStateMachineRole')) {
            for (const action of actionsOf(statement)) {
              expect(action, role).toMatch(/^(logs:(\w*LogDeliver\w*|Describe\w+|PutResourcePolicy)|xray:\w+)$/);
            }
            continue;
          }
          expect(actionsOf(statement).sort(), role).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
        }
      }
    });
  });

  describe('table', () => {
    it('is on-demand, recoverable, protected from deletion and retained', () => {
      template.hasResource('AWS::DynamoDB::Table', {
        DeletionPolicy: 'Retain',
        Properties: Match.objectLike({
          BillingMode: 'PAY_PER_REQUEST',
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          TimeToLiveSpecification: { AttributeName: 'expiresAtEpoch', Enabled: true },
          DeletionProtectionEnabled: true,
          KeySchema: [
            { AttributeName: 'PK', KeyType: 'HASH' },
            { AttributeName: 'SK', KeyType: 'RANGE' },
          ],
        }),
      });
    });

    it('has its three global secondary indexes: two projecting every attribute, the session activity index keys only', () => {
      template.hasResourceProperties('AWS::DynamoDB::Table', {
        GlobalSecondaryIndexes: [
          {
            IndexName: 'GSI1',
            KeySchema: [
              { AttributeName: 'GSI1PK', KeyType: 'HASH' },
              { AttributeName: 'GSI1SK', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
          {
            IndexName: 'GSI2',
            KeySchema: [
              { AttributeName: 'GSI2PK', KeyType: 'HASH' },
              { AttributeName: 'GSI2SK', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
          {
            IndexName: 'GSI3',
            KeySchema: [
              { AttributeName: 'GSI3PK', KeyType: 'HASH' },
              { AttributeName: 'GSI3SK', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'KEYS_ONLY' },
          },
        ],
      });
    });
  });

  describe('bootstrap', () => {
    it('runs the bootstrap function through a custom resource on deploy', () => {
      template.resourceCountIs('Custom::ControllerBootstrap', 1);
      template.hasResourceProperties('Custom::ControllerBootstrap', {
        deployId: Match.anyValue(),
        adminUsername: 'admin',
      });
    });

    it('generates the admin password into a retained secret the bootstrap function may read', () => {
      template.hasResource('AWS::SecretsManager::Secret', {
        DeletionPolicy: 'Retain',
        Properties: Match.objectLike({ GenerateSecretString: Match.objectLike({ PasswordLength: 32 }) }),
      });
      template.hasResourceProperties('AWS::Lambda::Function', {
        Description: Match.stringLikeRegexp('seeds the table'),
        Environment: {
          Variables: Match.objectLike({
            TABLE_NAME: Match.anyValue(),
            ADMIN_USERNAME: 'admin',
            ADMIN_PASSWORD_SECRET_ARN: Match.anyValue(),
          }),
        },
      });
    });
  });

  it('outputs the APIs’ base URLs, the table and the admin secret', () => {
    const outputs = Object.keys(template.toJSON().Outputs as Record<string, unknown>);
    expect(outputs).toEqual(
      expect.arrayContaining([
        'ClientApiUrl',
        'ManagementApiUrl',
        'FabricApiUrl',
        'TableName',
        'AdminPasswordSecretArn',
      ]),
    );
  });
});

/** API Gateway's default quota of resources per REST API. */
const RESOURCE_QUOTA = 300;
/**
 * Head-room kept below the quota once every documented operation and the OIDC provider are served (for new paths of
 * later API versions). It was 50 before the OIDC provider took 23 resources; the quota can be raised on request.
 */
const RESOURCE_HEADROOM = 40;
/** CloudFormation's limit on a template's size (uploaded through S3, as CDK does for large templates). */
const TEMPLATE_SIZE_LIMIT = 1_000_000;

/**
 * Every documented operation of the OpenZiti documents (the edge APIs', and the fabric API's operations served), as a
 * route (all in one group: only the paths matter).
 */
const documentedRoutes: Route[] = (['client', 'management', 'fabric'] as const).flatMap((api) =>
  specOperations(api).map((operation) => ({
    method: operation.method.toUpperCase() as Route['method'],
    path: operation.pathTemplate,
    apis: [api],
    group: 'info' as OperationGroup,
    auth: 'none' as const,
    operation: operation.operationId,
  })),
);

/** The documented operations and the OIDC provider's, which no OpenAPI document lists. */
const servedRoutes: Route[] = [...documentedRoutes, ...OIDC_ROUTES];

/** Every resource path (each prefix of each template) that serving `routes` needs, as `resourcesOf` lays them out. */
function resourcePathsFor(routes: readonly Route[]): Set<string> {
  const paths = new Set<string>();
  for (const route of routes) {
    for (const { resource } of resourcesOf(route)) {
      // API Gateway names a path parameter once per level; the documents' names do not change the count.
      const parts = resource
        .split('/')
        .filter(Boolean)
        .map((part) => (part.startsWith('{') ? '{param}' : part));
      for (let i = 1; i <= parts.length; i++) paths.add(`/${parts.slice(0, i).join('/')}`);
    }
  }
  return paths;
}

/** The template as `cdk synth` writes it (one-space indents), whose bytes CloudFormation counts. */
const templateBytes = (json: unknown): number => Buffer.byteLength(JSON.stringify(json, undefined, 1));

describe("API Gateway's resource budget", () => {
  it('keeps room to spare once all 268 documented operations and the OIDC provider are served', () => {
    const needed = resourcePathsFor(servedRoutes).size;

    expect(documentedRoutes).toHaveLength(268);
    expect(resourcePathsFor(ROUTES).size).toBeLessThanOrEqual(needed);
    expect(needed).toBeLessThanOrEqual(RESOURCE_QUOTA - RESOURCE_HEADROOM);
  });
});

describe("CloudFormation's limits", () => {
  it('keeps the stack far under 500 resources: the API is one body, not a resource per path and method', () => {
    // About 170 today: per function a version, an alias, two alarms and a metric filter besides its role and logs.
    expect(Object.keys(resources).length).toBeLessThan(250);
    expect(resourcesOfType('AWS::ApiGateway::Resource')).toEqual([]);
    expect(resourcesOfType('AWS::ApiGateway::Method')).toEqual([]);
  });

  it('keeps the template well under the 1 MB limit with every documented operation served', () => {
    const full = new ControllerStack(
      new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } }),
      'FullController',
      { adminUsername: 'admin', apiSessionTimeoutMinutes: 30, routes: servedRoutes },
    );
    const fullTemplate = Template.fromStack(full).toJSON();

    // About 2 KB a resource path, half of it the CORS preflight, ~5 KB a function, ~4 KB of its alarms, version
    // and alias, and ~35 KB of dashboard and other alarms: the stack as it is (nearly every documented route, a
    // function per group) and every documented route in one group both leave head-room. The stack is about 661 KB
    // since the fabric API's function and its twelve resources (about 33 KB) joined it, so its bound is 70%.
    expect(templateBytes(template.toJSON())).toBeLessThan(0.7 * TEMPLATE_SIZE_LIMIT);
    expect(templateBytes(fullTemplate)).toBeLessThan(0.65 * TEMPLATE_SIZE_LIMIT);
  });
});

describe('login throttling', () => {
  const stage = onlyResourceOfType('AWS::ApiGateway::Stage')[1];
  const settings = stage.Properties.MethodSettings as Record<string, unknown>[];
  const loginResourcePaths = loginResources(ROUTES).map(({ resource }) => resource);

  /** The method settings of every login resource of a template's stage. */
  function loginMethodSettings(stageOf: Template): { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }[] {
    const [, limitedStage] = Object.entries(stageOf.findResources('AWS::ApiGateway::Stage'))[0]!;
    const methodSettings = (limitedStage as CfnResource).Properties.MethodSettings as {
      ResourcePath: string;
      HttpMethod: string;
      ThrottlingRateLimit: number;
      ThrottlingBurstLimit: number;
    }[];
    return loginResourcePaths.map((resource) => {
      const found = methodSettings.find(
        (setting) => setting.HttpMethod === 'POST' && setting.ResourcePath === `/${resource.replaceAll('/', '~1')}`,
      );
      if (!found) throw new Error(`no method settings for POST ${resource}`);
      return found;
    });
  }

  it('throttles each authenticate and enroll method on its own, on both APIs and the bare client paths', () => {
    expect(loginResourcePaths).toEqual(
      expect.arrayContaining(['/edge/client/v1/authenticate', '/edge/management/v1/authenticate', '/authenticate']),
    );
    for (const resource of loginResourcePaths) {
      expect(settings).toContainEqual(
        expect.objectContaining({
          HttpMethod: 'POST',
          // API Gateway's method settings escape the path's slashes.
          ResourcePath: `/${resource.replaceAll('/', '~1')}`,
          ThrottlingRateLimit: loginThrottling().rateLimit,
          ThrottlingBurstLimit: loginThrottling().burstLimit,
        }),
      );
    }
    // Every throttled method is one the REST API serves, or the deployment would fail.
    for (const resource of loginResourcePaths) expect(Object.keys(body.paths)).toContain(resource);
  });

  it('serves a fleet of 10,000 devices restarting at once on one login path within a couple of minutes', () => {
    for (const setting of loginMethodSettings(template)) {
      expect(setting.ThrottlingRateLimit * FLEET_LOGIN_SECONDS).toBeGreaterThanOrEqual(10_000);
      expect(setting.ThrottlingBurstLimit).toBeGreaterThanOrEqual(setting.ThrottlingRateLimit);
    }
  });

  it("lets the web ACL's per-address login limit bite long before one address could fill a login path", () => {
    const [, webAcl] = onlyResourceOfType('AWS::WAFv2::WebACL');
    const rules = webAcl.Properties.Rules as { Name: string; Statement: { RateBasedStatement: { Limit: number } } }[];
    const perAddress = rules.find((rule) => rule.Name === 'RateLimitLoginsPerIp')!.Statement.RateBasedStatement;
    const perAddressPerSecond = perAddress.Limit / FIREWALL_WINDOW_SECONDS;
    for (const setting of loginMethodSettings(template)) {
      // One address at its limit takes at most a twentieth of a path: twenty addresses to use it up for everyone.
      expect(perAddressPerSecond * ADDRESSES_TO_FILL_A_LOGIN_PATH).toBeLessThanOrEqual(setting.ThrottlingRateLimit);
    }
  });

  it('sizes the login throttles from the fleet size, and takes explicit limits over it', () => {
    const synth = (id: string, props: Record<string, number>) =>
      Template.fromStack(
        new ControllerStack(new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } }), id, {
          adminUsername: 'admin',
          ...props,
        }),
      );
    const large = loginMethodSettings(synth('LargeFleetController', { fleetSize: 60_000 }));
    expect(large.map((setting) => [setting.ThrottlingRateLimit, setting.ThrottlingBurstLimit])).toEqual(
      large.map(() => [500, 1000]),
    );
    const explicit = loginMethodSettings(
      synth('ExplicitLoginController', { fleetSize: 60_000, loginRateLimit: 150, loginBurstLimit: 400 }),
    );
    expect(explicit.map((setting) => [setting.ThrottlingRateLimit, setting.ThrottlingBurstLimit])).toEqual(
      explicit.map(() => [150, 400]),
    );
  });

  it('has a per-IP rate-based web ACL rule scoped to POSTs of the login paths, answering 429 with Retry-After', () => {
    const [, webAcl] = onlyResourceOfType('AWS::WAFv2::WebACL');
    const rules = webAcl.Properties.Rules as { Name: string; Statement: Record<string, unknown> }[];
    const rule = rules.find((candidate) => candidate.Name === 'RateLimitLoginsPerIp');
    expect(rule).toMatchObject({
      Statement: {
        RateBasedStatement: {
          AggregateKeyType: 'IP',
          Limit: DEFAULT_FIREWALL_LOGIN_RATE_LIMIT,
          ScopeDownStatement: { AndStatement: { Statements: expect.any(Array) } },
        },
      },
      Action: {
        Block: {
          CustomResponse: {
            ResponseCode: 429,
            CustomResponseBodyKey: 'logins-rate-limited',
            ResponseHeaders: expect.arrayContaining([{ Name: 'Retry-After', Value: '60' }]),
          },
        },
      },
    });
    const bodies = webAcl.Properties.CustomResponseBodies as Record<string, { Content: string }>;
    expect(JSON.parse(bodies['logins-rate-limited']!.Content)).toMatchObject({
      error: { code: 'SERVER_TOO_MANY_REQUESTS' },
    });
    const pattern = new RegExp(LOGIN_PATH_PATTERN);
    for (const path of [
      '/prod/edge/client/v1/authenticate',
      '/prod/authenticate/mfa',
      '/prod/edge/client/v1/enroll/ott',
    ]) {
      expect(path).toMatch(pattern);
    }
    for (const path of ['/prod/edge/management/v1/authenticators', '/prod/edge/management/v1/enrollments']) {
      expect(path).not.toMatch(pattern);
    }
  });
});
