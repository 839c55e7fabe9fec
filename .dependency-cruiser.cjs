/**
 * The layers of the code, from the ground up. A module may import from its own layer and the layers below it, never
 * from a layer above: `npm test` fails on a wrong arrow and names the rule, which says who may import whom.
 * (dependency-cruiser; `npm run layers` shows the violations alone.)
 */
const LAYERS = [
  {
    name: 'foundation',
    path: '^shared/(errors/|config\\.ts|ids\\.ts|map-bounded\\.ts|recent-map\\.ts|log/|routes/)',
    about: 'errors, configuration, ids, logging, the route table: needs nothing of the project',
  },
  {
    name: 'model',
    path: '^shared/(entities|query|schemas)/',
    about: 'entity declarations, the filter language, field schemas',
  },
  { name: 'store', path: '^shared/store/', about: 'the single-table layout and its reads and writes' },
  {
    name: 'ports',
    path: '^shared/ports/',
    about: 'the interfaces of what lies outside the process, and the Deps port',
  },
  {
    name: 'domain',
    path: '^shared/(list|policy|posture|auth|integrity|pki|mfa|ext-jwt|oidc|rate-limit|net)/|^shared/(bootstrap|deps-from-config)\\.ts',
    about:
      'lists, policies, posture, sessions, integrity, PKI, MFA, external JWTs, OIDC tokens, throttling, address kinds; the Deps the configuration names',
  },
  {
    name: 'api',
    path: '^shared/(crud|http|views|openapi)/',
    about: 'the CRUD kit, HTTP plumbing, views, API documents',
  },
  { name: 'functions', path: '^functions/', about: 'one Lambda handler per operation group, and the composition root' },
  {
    name: 'endpoints',
    path: '^ctrl-channel/',
    about: "the routers' control channel: a long-lived endpoint (inside npm start, an ECS service on AWS), no Lambda",
  },
  { name: 'edges', path: '^(cdk|local|bench|scripts)/', about: 'the CDK app, the local server, benchmarks, scripts' },
];

const forbidden = LAYERS.flatMap((layer, index) => {
  const above = LAYERS.slice(index + 1);
  if (above.length === 0) return [];
  return [
    {
      name: `${layer.name}-imports-only-below`,
      comment:
        `${layer.name} (${layer.about}) may import only from itself and below ` +
        `(${
          LAYERS.slice(0, index)
            .map((below) => below.name)
            .join(', ') || 'nothing'
        }); ` +
        `not from ${above.map((higher) => higher.name).join(', ')}`,
      severity: 'error',
      from: { path: layer.path },
      to: { path: above.map((higher) => higher.path) },
    },
  ];
});

module.exports = {
  forbidden: [
    ...forbidden,
    {
      name: 'shared-files-belong-to-a-layer',
      comment: 'every module of shared/ belongs to one layer: add its folder to LAYERS in .dependency-cruiser.cjs',
      severity: 'error',
      from: {
        path: '^shared/',
        pathNot: LAYERS.filter((layer) => layer.path.includes('shared/')).map((layer) => layer.path),
      },
      to: {},
    },
    {
      name: 'no-circular',
      comment: 'modules import each other in a circle: split out what both need',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'only-the-store-talks-to-dynamodb',
      comment:
        "the table is the store's: the domain, the API and the function groups read and write it through " +
        'shared/store (partial updates, guards, index queries, item modules), never with the DynamoDB client',
      severity: 'error',
      from: { path: '^(functions|shared)/', pathNot: '^shared/store/' },
      to: { path: '@aws-sdk/(lib-dynamodb|client-dynamodb)' },
    },
    {
      name: 'endpoints-share-only-shared',
      comment:
        'the control channel endpoint is no Lambda and runs apart from the functions: what it needs of theirs ' +
        'moves into shared/',
      severity: 'error',
      from: { path: '^ctrl-channel/' },
      to: { path: '^functions/' },
    },
    {
      name: 'function-groups-stay-apart',
      comment: 'a function group imports nothing of another group: move what both need into shared/',
      severity: 'error',
      from: { path: '^functions/([^/]+)/' },
      to: { path: '^functions/([^/]+)/', pathNot: '^functions/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // TypeScript 7 has no JavaScript API yet: swc reads the sources, type-only imports included. No
    // tsPreCompilationDeps: it only picks the tsc reader, which cannot load TypeScript 7 and so warned that sources
    // may be missed, while swc already found the same modules and dependencies.
    parser: 'swc',
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'], conditionNames: ['import', 'node', 'default'] },
  },
};
