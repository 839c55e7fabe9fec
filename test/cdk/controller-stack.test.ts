import { App, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { resourcesOf } from '#shared/routes/resource-paths.ts';
import type { OperationGroup } from '#shared/routes/route.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import { DEFAULT_API_LIMITS } from '../../cdk/controller-settings.ts';
import { ControllerStack } from '../../cdk/controller-stack.ts';
import { GATEWAY_ERRORS } from '../../cdk/gateway-error-responses.ts';
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
  const fn = stack.functions.get(group);
  if (!fn) throw new Error(`no function for ${group}`);
  return stack.getLogicalId(fn.node.defaultChild as CfnElement);
}

/** Full path of an API Gateway resource, rebuilt from the PathPart/ParentId chain down from the root resource. */
function pathOf(resourceId: Intrinsic): string {
  if (resourceId['Fn::GetAtt']?.[1] === 'RootResourceId') return '/';
  const resource = resourceById(resourceId.Ref);
  if (resource.Type !== 'AWS::ApiGateway::Resource') throw new Error(`not a resource: ${resourceId.Ref}`);
  const parent = pathOf(resource.Properties.ParentId as Intrinsic);
  return `${parent === '/' ? '' : parent}/${resource.Properties.PathPart as string}`;
}

/** The logical id of the function an integration URI invokes. */
function invokedFunction(uri: unknown): string | undefined {
  if (Array.isArray(uri)) return uri.map(invokedFunction).find((id) => id !== undefined);
  if (uri === null || typeof uri !== 'object') return undefined;
  const getAtt = (uri as Intrinsic)['Fn::GetAtt'];
  if (getAtt?.[1] === 'Arn') return getAtt[0];
  return Object.values(uri)
    .map(invokedFunction)
    .find((id) => id !== undefined);
}

describe('ControllerStack', () => {
  describe('REST API', () => {
    const methods = new Map(
      resourcesOfType('AWS::ApiGateway::Method').map(([, method]) => {
        const props = method.Properties;
        const integration = props.Integration as { Type: string; Uri: unknown };
        const key = `${props.HttpMethod as string} ${pathOf(props.ResourceId as Intrinsic)}`;
        return [key, { type: integration.Type, functionId: invokedFunction(integration.Uri) }];
      }),
    );

    it('serves every route at every resource of the route, proxied to the function of its group', () => {
      for (const route of ROUTES) {
        for (const { resource } of resourcesOf(route)) {
          const method = methods.get(`${route.method} ${resource}`);
          expect(method, `${route.method} ${resource}`).toEqual({
            type: 'AWS_PROXY',
            functionId: functionLogicalId(route.group),
          });
        }
      }
    });

    it('has no method the route table does not ask for (besides CORS preflights and the 405 catch-alls)', () => {
      const expected = ROUTES.flatMap((route) =>
        resourcesOf(route).map(({ resource }) => `${route.method} ${resource}`),
      );
      const routed = [...methods.keys()].filter((key) => !key.startsWith('OPTIONS ') && !key.startsWith('ANY '));
      expect(routed.sort()).toEqual([...new Set(expected)].sort());
    });

    it('sends any other method of a served resource to a function, so it answers 405 in the envelope', () => {
      const served = new Set(ROUTES.flatMap((route) => resourcesOf(route).map(({ resource }) => resource)));
      for (const resource of served) {
        expect(methods.get(`ANY ${resource}`), resource).toMatchObject({ type: 'AWS_PROXY' });
      }
    });

    it('serves the un-prefixed alias of the base path at the REST API root', () => {
      const root = ROUTES.find((route) => route.path === '/' && route.apis.includes('client'));
      expect(root).toBeDefined();
      expect(methods.has(`${root?.method} /`)).toBe(true);
    });

    it('never gives a resource two differently named path parameters as children (API Gateway rejects that)', () => {
      const parameterChildren = new Map<string, Set<string>>();
      for (const [, resource] of resourcesOfType('AWS::ApiGateway::Resource')) {
        const pathPart = resource.Properties.PathPart as string;
        if (!pathPart.startsWith('{')) continue;
        const parent = pathOf(resource.Properties.ParentId as Intrinsic);
        parameterChildren.set(parent, (parameterChildren.get(parent) ?? new Set()).add(pathPart));
      }
      for (const [parent, names] of parameterChildren) expect([...names], parent).toHaveLength(1);
    });

    it('grants API Gateway one API-wide invoke permission per function rather than one per method', () => {
      const permissions = resourcesOfType('AWS::Lambda::Permission');
      const functionCount = resourcesOfType('AWS::Lambda::Function').length;
      expect(permissions.length).toBeLessThanOrEqual(2 * functionCount);
      for (const group of operationGroupsOf(ROUTES)) {
        const own = permissions.filter(
          ([, p]) => (p.Properties.FunctionName as Intrinsic)['Fn::GetAtt']?.[0] === functionLogicalId(group),
        );
        expect(own, group).toHaveLength(1);
      }
    });

    it('answers API Gateway errors in the controller error envelope', () => {
      for (const { type, code } of GATEWAY_ERRORS) {
        template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
          ResponseType: type.responseType,
          ResponseTemplates: { 'application/json': Match.stringLikeRegexp(`"code":"${code}"`) },
        });
      }
      const statuses = resourcesOfType('AWS::ApiGateway::GatewayResponse').map(([, r]) => ({
        type: r.Properties.ResponseType,
        status: r.Properties.StatusCode,
        body: JSON.parse((r.Properties.ResponseTemplates as Record<string, string>)['application/json']!),
      }));
      expect(statuses).toContainEqual(
        expect.objectContaining({
          type: 'MISSING_AUTHENTICATION_TOKEN',
          status: '404',
          body: {
            error: { code: 'NOT_FOUND', message: expect.any(String), requestId: '$context.requestId' },
            meta: { apiVersion: '0.0.1', apiEnrollmentVersion: '0.0.1' },
          },
        }),
      );
      expect(statuses).toContainEqual(expect.objectContaining({ type: 'REQUEST_TOO_LARGE', status: '413' }));
      expect(statuses).toContainEqual(expect.objectContaining({ type: 'INTEGRATION_TIMEOUT', status: '503' }));
      expect(statuses).toContainEqual(expect.objectContaining({ type: 'WAF_FILTERED', status: '400' }));
    });

    it('answers CORS preflights on every resource in API Gateway, and lets browsers read its own errors', () => {
      const methods = resourcesOfType('AWS::ApiGateway::Method').map(([, method]) => method.Properties);
      const routed = new Set(
        methods.filter((m) => m.HttpMethod !== 'OPTIONS').map((m) => JSON.stringify(m.ResourceId)),
      );
      const preflighted = new Set(
        methods
          .filter((m) => m.HttpMethod === 'OPTIONS' && (m.Integration as { Type: string }).Type === 'MOCK')
          .map((m) => JSON.stringify(m.ResourceId)),
      );
      for (const resource of routed) expect(preflighted.has(resource), resource).toBe(true);
      for (const [, response] of resourcesOfType('AWS::ApiGateway::GatewayResponse')) {
        expect(response.Properties.ResponseParameters).toMatchObject({
          'gatewayresponse.header.access-control-allow-origin': "'*'",
        });
      }
    });

    it('times integrations out at the 10 s API deadline', () => {
      for (const [, method] of resourcesOfType('AWS::ApiGateway::Method')) {
        if (method.Properties.HttpMethod === 'OPTIONS') continue; // CORS preflights are answered by API Gateway.
        expect((method.Properties.Integration as { TimeoutInMillis: number }).TimeoutInMillis).toBe(10_000);
      }
    });

    it('deploys a regional API with access logs and without request body logging', () => {
      template.hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointConfiguration: { Types: ['REGIONAL'] } });
      template.hasResourceProperties('AWS::ApiGateway::Stage', {
        AccessLogSetting: Match.objectLike({ Format: Match.stringLikeRegexp('requestId') }),
        MethodSettings: [Match.objectLike({ DataTraceEnabled: false, MetricsEnabled: true })],
      });
    });

    it('traces requests with X-Ray and throttles the whole stage', () => {
      template.hasResourceProperties('AWS::ApiGateway::Stage', {
        TracingEnabled: true,
        MethodSettings: [
          Match.objectLike({
            HttpMethod: '*',
            ResourcePath: '/*',
            ThrottlingRateLimit: DEFAULT_API_LIMITS.apiRateLimit,
            ThrottlingBurstLimit: DEFAULT_API_LIMITS.apiBurstLimit,
          }),
        ],
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
        MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 })],
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

    it('has exactly one Node 24 arm64 ESM function per operation group', () => {
      expect([...stack.functions.keys()]).toEqual(groups);
      const ids = groups.map(functionLogicalId);
      expect(new Set(ids).size).toBe(groups.length);
      for (const id of ids) {
        expect(resourceById(id).Properties).toMatchObject({
          Runtime: 'nodejs24.x',
          Architectures: ['arm64'],
          Handler: 'index.handler',
          MemorySize: 1024,
          TracingConfig: { Mode: 'Active' },
          LoggingConfig: { LogFormat: 'JSON' },
          Environment: {
            Variables: {
              TABLE_NAME: { Ref: stack.getLogicalId(stack.table.node.defaultChild as CfnElement) },
              API_SESSION_TIMEOUT_MINUTES: '30',
              NODE_OPTIONS: '--enable-source-maps',
            },
          },
        });
      }
    });

    it('gives every controller function a log group of its own', () => {
      const controllerFunctions = resourcesOfType('AWS::Lambda::Function').filter(
        ([, fn]) => fn.Properties.Handler === 'index.handler',
      );
      expect(controllerFunctions).toHaveLength(groups.length + 1);
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
        expect(
          actions.some((action) => action.startsWith('dynamodb:')),
          group,
        ).toBe(true);
        expect(actions.filter((action) => !action.startsWith('dynamodb:')).sort(), group).toEqual([
          'logs:CreateLogStream',
          'logs:PutLogEvents',
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

    it('gives no function an AWS managed policy, and grants nothing on `*` but X-Ray', () => {
      const functionRoles = resourcesOfType('AWS::Lambda::Function').map(
        ([, fn]) => (fn.Properties.Role as Intrinsic)['Fn::GetAtt']?.[0],
      );
      for (const role of functionRoles) expect(resourceById(role).Properties.ManagedPolicyArns, role).toBeUndefined();
      for (const [role] of resourcesOfType('AWS::IAM::Role')) {
        for (const statement of statementsOfRole(role)) {
          if (![statement.Resource].flat().includes('*')) continue;
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
        bootstrapVersion: Match.anyValue(),
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

  it('outputs both API base URLs, the table and the admin secret', () => {
    const outputs = Object.keys(template.toJSON().Outputs as Record<string, unknown>);
    expect(outputs).toEqual(
      expect.arrayContaining(['ClientApiUrl', 'ManagementApiUrl', 'TableName', 'AdminPasswordSecretArn']),
    );
  });
});

/** API Gateway's default quota of resources per REST API. */
const RESOURCE_QUOTA = 300;
/** Head-room kept below the quota once every documented operation is served (for new paths of later API versions). */
const RESOURCE_HEADROOM = 50;

/** Every resource path (each prefix of each template) that serving `routes` needs, as `resourcesOf` lays them out. */
function resourcePathsFor(routes: readonly Parameters<typeof resourcesOf>[0][]): Set<string> {
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

describe("API Gateway's resource budget", () => {
  it('stays under the quota with the routes served today', () => {
    const count = Object.values(resources).filter((resource) => resource.Type === 'AWS::ApiGateway::Resource').length;

    expect(count).toBeLessThan(RESOURCE_QUOTA - RESOURCE_HEADROOM);
  });

  it('keeps room to spare once all 258 documented operations are served the same way', () => {
    const documented = (['client', 'management'] as const).flatMap((api) =>
      specOperations(api).map((operation) => ({
        method: operation.method as 'GET',
        path: operation.pathTemplate,
        apis: [api],
        group: 'info' as OperationGroup,
        auth: 'none' as const,
        operation: operation.operationId,
      })),
    );

    const needed = resourcePathsFor(documented).size;

    expect(documented).toHaveLength(258);
    expect(needed).toBeLessThanOrEqual(RESOURCE_QUOTA - RESOURCE_HEADROOM);
  });
});

describe("CloudFormation's resource limit", () => {
  it('keeps the stack under 500 resources (every API Gateway resource and method is one)', () => {
    // Close to the limit today: the REST API should come from one OpenAPI body before many more routes land.
    expect(Object.keys(resources).length).toBeLessThan(500);
  });
});
