import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { resourcesOf } from '#shared/routes/resource-paths.ts';
import type { Route } from '#shared/routes/route.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import type { HttpResponse, RequestOptions } from '../support/https-client.ts';
import { authPolicyBody, M } from '../support/management-fixtures.ts';
import { useTestController } from '../support/use-controller.ts';

/**
 * Every route of the table, with generated bodies, query strings, headers, path ids and callers: whatever is sent, the
 * answer is never a 5xx. Other test files go deep on one route each; this one goes wide.
 */

// A handful per route keeps the sweep to seconds; SWEEP_RUNS_PER_ROUTE=500 searches deeper before a release.
const RUNS_PER_ROUTE = Number(process.env.SWEEP_RUNS_PER_ROUTE) || 12;

// The sweep logs its callers in again whenever a run ends their session: per-username throttling would answer its own
// fixture logins 429 on a long sweep (SWEEP_RUNS_PER_ROUTE); the per-address limit stays on.
const controller = useTestController({
  loginRateLimit: { perIp: 100_000, perUsername: 0, perSourceAndUsername: 0, windowSeconds: 60 },
});

// --- Who calls -------------------------------------------------------------------------------------------------------

type Caller = 'admin' | 'user' | 'anonymous';

const USER_PASSWORD = 'sweep-user-password';
// Policies the sweep writes count wrong passwords, so that moving an identity under one reaches the lockout code.
const LOCKOUT = { lockoutDurationMinutes: 5, maxAttempts: 3 };
const sessions = new Map<Caller, string>();
let user = { name: '', identityId: '', authenticatorId: '' };
let users = 0;

async function created(path: string, body: unknown): Promise<string> {
  const response = await fixtureCall('admin', 'POST', `${M}${path}`, { body });
  if (response.status !== 201) throw new Error(`sweep fixture ${path}: ${response.status} ${response.text}`);
  return response.body.data.id as string;
}

/** A non-admin identity with a password, the caller of self-service routes; made again if the sweep broke the last. */
async function createUser(): Promise<void> {
  const name = `sweep-user-${++users}`;
  const identityId = await created('/identities', { name, type: 'User', isAdmin: false });
  const authenticatorId = await created('/authenticators', {
    identityId,
    method: 'updb',
    username: name,
    password: USER_PASSWORD,
  });
  user = { name, identityId, authenticatorId };
}

/**
 * A live session of the caller. Runs may end it (`DELETE /current-api-session`), disable the user or change its
 * password; a 401 drops the session and the next call logs in again, with a new user if the old one cannot.
 */
async function tokenOf(caller: Exclude<Caller, 'anonymous'>): Promise<string> {
  const known = sessions.get(caller);
  if (known) return known;
  let token: string;
  if (caller === 'admin') {
    token = await controller().login();
  } else {
    try {
      token = await controller().login(user.name, USER_PASSWORD);
    } catch {
      await createUser();
      token = await controller().login(user.name, USER_PASSWORD);
    }
  }
  sessions.set(caller, token);
  return token;
}

/** Whether a session still works: a 401 may only mean that the user called an admin route. */
async function isLive(token: string): Promise<boolean> {
  return (await controller().call('GET', `${M}/current-api-session`, { token })).status === 200;
}

/** One call as a caller. A session that has ended (runs end sessions) is dropped, so that the next call logs in. */
async function callAs(caller: Caller, method: string, path: string, options: RequestOptions = {}) {
  const token = caller === 'anonymous' ? undefined : await tokenOf(caller);
  const response = await controller().call(method, path, { ...options, ...(token ? { token } : {}) });
  if (response.status === 401 && caller !== 'anonymous' && !(await isLive(token!))) sessions.delete(caller);
  return response;
}

/** A call the sweep needs to succeed: once more with a new session if the last one had ended. */
async function fixtureCall(
  caller: Exclude<Caller, 'anonymous'>,
  method: string,
  path: string,
  options: RequestOptions = {},
) {
  const response = await callAs(caller, method, path, options);
  return sessions.has(caller) ? response : callAs(caller, method, path, options);
}

// --- Path ids --------------------------------------------------------------------------------------------------------

/** The collection an `{id}` route addresses, e.g. `/identities` for `/identities/{id}/disable`. */
function collectionOf(route: Route): string | undefined {
  const at = route.path.indexOf('/{id}');
  return at === -1 ? undefined : route.path.slice(0, at);
}

const collections = [...new Set(ROUTES.map(collectionOf).filter((path) => path !== undefined))];
/** Ids of what exists before the sweep (the default admin, its authenticator, the default auth policy, ...). */
const existingIds = new Map<string, string[]>();
/** Ids of what the sweep made itself: the only ones writes may address, so no run can lock the admin out. */
const ownIds = new Map<string, string[]>();

/** The ids a caller sees in a collection (`/current-identity/...` ones differ by caller). */
async function idsIn(collection: string, caller: Exclude<Caller, 'anonymous'>): Promise<string[]> {
  const response = await fixtureCall(caller, 'GET', `${M}${collection}?limit=500`);
  return response.status === 200 ? response.body.data.map((item: { id: string }) => item.id) : [];
}

const randomId = fc.oneof(
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.constantFrom('constructor', '__proto__', 'toString', '%', '%zz', '%E0%A4%A', '..', '.', '%20', 'x'.repeat(3000)),
);

function idFor(route: Route): fc.Arbitrary<string> {
  const collection = collectionOf(route);
  if (!collection) return fc.constant('');
  const own = ownIds.get(collection) ?? [];
  const known = route.method === 'GET' ? [...(existingIds.get(collection) ?? []), ...own] : own;
  return known.length ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known) }, randomId) : randomId;
}

// --- Bodies ----------------------------------------------------------------------------------------------------------

// Names the API's documents use, so that generated objects get past "unknown field" and into the code behind it.
const FIELD_NAMES = [
  'name',
  'type',
  'isAdmin',
  'roleAttributes',
  'authPolicyId',
  'externalId',
  'tags',
  'appData',
  'enrollment',
  'ott',
  'updb',
  'ottca',
  'defaultHostingCost',
  'defaultHostingPrecedence',
  'serviceHostingCosts',
  'serviceHostingPrecedences',
  'method',
  'identityId',
  'username',
  'password',
  'currentPassword',
  'certPem',
  'durationMinutes',
  'primary',
  'secondary',
  'cert',
  'extJwt',
  'allowed',
  'allowedSigners',
  'allowExpiredCerts',
  'lockoutDurationMinutes',
  'maxAttempts',
  'minPasswordLength',
  'requireMixedCase',
  'requireNumberChar',
  'requireSpecialChar',
  'requireTotp',
  'requireExtJwtSigner',
  'configTypes',
  'envInfo',
  'sdkInfo',
];
const TRICKY_KEYS = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', '', ' ', 'ä'];

const key = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...FIELD_NAMES) },
  { weight: 2, arbitrary: fc.constantFrom(...TRICKY_KEYS) },
  fc.string({ maxLength: 10 }),
  fc.constant('k'.repeat(2000)),
);

// Bodies are generated as JSON text, so that numbers JSON.stringify cannot write (1e400, 30 digits) are sent too.
const numberText = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.integer().map(String),
  fc.constantFrom('1e400', '-1e400', '1e-400', '-0', '123456789012345678901234567890', '9007199254740993', '0.1'),
);
const stringText = fc
  .oneof(
    { weight: 4, arbitrary: fc.string({ maxLength: 20 }) },
    fc.string({ unit: 'binary', maxLength: 10 }),
    fc.constantFrom('User', 'Router', 'Default', 'updb', 'cert', '#all', '@', 'admin-of-nothing', 'null', ''),
    // Odd unicode: bidi overrides, zero-width, NUL, combining marks, astral characters, a lone surrogate, and roles
    // built of them; long multi-byte text (4 bytes a character) past a key's byte limit at a quarter of the length.
    fc.constantFrom(
      'abc\u202Egpj.exe',
      '\u200B',
      'a\u0000b',
      'e\u0301\u0301\u0301',
      '😀'.repeat(300),
      '#\u2066x\u2069',
      '@\u0000',
      '#a,#b',
      '\ud800',
      'ｆｕｌｌｗｉｄｔｈ',
      '\r\n\t',
    ),
    // Past a key's 1,024 / 2,048 bytes, and a few of them past an item's 400 KB.
    fc.constantFrom(256, 1025, 5000, 120_000).map((length) => 'x'.repeat(length)),
  )
  .map((text) => JSON.stringify(text));
const scalarText = fc.oneof(
  stringText,
  numberText,
  fc.constantFrom('null', 'true', 'false', '"\\ud800"', '"\\u0000"'),
  // Ids that exist, so references resolve and reach the code behind them.
  fc.constant(null).chain(() => {
    const ids = [...existingIds.values(), ...ownIds.values()].flat();
    return ids.length ? fc.constantFrom(...ids).map((id) => JSON.stringify(id)) : fc.constant('"no-ids-yet"');
  }),
);

const objectText = (value: fc.Arbitrary<string>, maxKeys: number) =>
  fc
    .array(fc.tuple(key, value), { maxLength: maxKeys })
    .map((entries) => `{${entries.map(([name, text]) => `${JSON.stringify(name)}:${text}`).join(',')}}`);

const { value: jsonText } = fc.letrec<{ value: string; array: string; object: string }>((tie) => ({
  value: fc.oneof({ maxDepth: 4, depthIdentifier: 'json' }, scalarText, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4, depthIdentifier: 'json' }).map((items) => `[${items.join(',')}]`),
  object: objectText(tie('value'), 4),
}));

/** A chain of objects or arrays within the depth the body parser allows (64), deeper than any document needs. */
const deepText = fc
  .tuple(fc.integer({ min: 8, max: 60 }), key, fc.boolean(), scalarText)
  .map(([depth, name, arrays, leaf]) =>
    arrays
      ? `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`
      : `${`{${JSON.stringify(name)}:`.repeat(depth)}${leaf}${'}'.repeat(depth)}`,
  );

const bodyText = fc.oneof(
  { weight: 5, arbitrary: objectText(jsonText, 8) },
  { weight: 2, arbitrary: jsonText },
  { weight: 1, arbitrary: deepText },
  { weight: 1, arbitrary: fc.constantFrom('', '{', '{"name":1,"name":"twice"}', 'x', '[]', '{}', '"text"', '\u0000') },
);

const pick = <T>(items: readonly T[] | undefined, n: number): T | undefined =>
  items?.length ? items[n % items.length] : undefined;

/**
 * Valid bodies of the routes that take one, by route path. Random objects rarely get past validation; an example with
 * a few fields replaced by generated values reaches the store with maps keyed `__proto__`, values of every size, ...
 */
const EXAMPLES: Readonly<Record<string, (n: number) => Record<string, unknown>>> = {
  '/authenticate': () => ({ username: user.name, password: USER_PASSWORD, configTypes: [], envInfo: {}, sdkInfo: {} }),
  '/identities': (n) => ({ name: `sweep-${n}`, type: 'User', isAdmin: false, roleAttributes: ['a'], tags: {} }),
  '/identities/{id}': (n) => ({ name: `sweep-${n}`, type: 'User', isAdmin: false, tags: {}, appData: {} }),
  '/identities/{id}/disable': () => ({ durationMinutes: 1 }),
  '/enroll/challenge': (n) => ({ keyId: `kid-${n}`, nonce: '6f1c0b6e-8c1e-4f57-9d4a-1f2e3d4c5b6a' }),
  '/identities/{id}/trace': (n) => ({ enabled: n % 2 === 0, duration: `${(n % 60) + 1}m`, channels: ['all'] }),
  '/authenticators': (n) => ({
    identityId: pick(ownIds.get('/identities'), n) ?? user.identityId,
    method: 'updb',
    username: `sweep-${n}`,
    password: 'pw-12345',
  }),
  '/authenticators/{id}': (n) => ({ username: `sweep-${n}`, password: 'pw-12345', tags: {} }),
  '/current-identity/authenticators/{id}': (n) => ({
    currentPassword: USER_PASSWORD,
    username: `sweep-${n}`,
    password: USER_PASSWORD,
    tags: {},
  }),
  '/auth-policies': (n) => ({ ...authPolicyBody(`sweep-${n}`, LOCKOUT), tags: {} }),
  '/auth-policies/{id}': (n) => ({ ...authPolicyBody(`sweep-${n}`, LOCKOUT), tags: {} }),
  '/config-types': (n) => ({ name: `sweep-${n}`, target: 'service', schema: { type: 'object' }, tags: {} }),
  '/config-types/{id}': (n) => ({ name: `sweep-${n}`, schema: { type: 'object', properties: {} }, tags: {} }),
  '/configs': (n) => ({
    name: `sweep-${n}`,
    configTypeId: 'f2dd2df0-9c04-4b84-a91e-71437ac229f1',
    data: { hostname: `sweep-${n}`, port: n % 65536 },
    tags: {},
  }),
  '/configs/{id}': (n) => ({ name: `sweep-${n}`, data: { hostname: `sweep-${n}`, port: n % 65536 }, tags: {} }),
  '/services': (n) => ({
    name: `sweep-${n}`,
    encryptionRequired: true,
    configs: [],
    roleAttributes: ['a'],
    terminatorStrategy: 'smartrouting',
    tags: {},
  }),
  '/services/{id}': (n) => ({ name: `sweep-${n}`, maxIdleTimeMillis: n, roleAttributes: ['b'], tags: {} }),
  '/posture-checks': (n) => ({ name: `sweep-${n}`, typeId: 'DOMAIN', domains: ['a.example'], roleAttributes: ['a'] }),
  '/posture-checks/{id}': (n) => ({ name: `sweep-${n}`, typeId: 'DOMAIN', domains: ['a.example'], tags: {} }),
  '/sessions': (n) => ({ serviceId: pick(ownIds.get('/services'), n) ?? 'none', type: n % 2 === 0 ? 'Dial' : 'Bind' }),
  '/posture-response': (n) => ({ id: `endpoint-${n}`, typeId: 'ENDPOINT_STATE', woken: n % 2 === 0, unlocked: true }),
  '/edge-routers': (n) => ({ name: `sweep-er-${n}`, cost: 1, isTunnelerEnabled: n % 2 === 0, roleAttributes: ['a'] }),
  '/edge-routers/{id}': (n) => ({ name: `sweep-er-${n}`, isTunnelerEnabled: n % 2 === 1, appData: {}, tags: {} }),
  '/transit-routers': (n) => ({ name: `sweep-tr-${n}`, cost: 1, noTraversal: false, tags: {} }),
  '/transit-routers/{id}': (n) => ({ name: `sweep-tr-${n}`, disabled: true }),
  '/routers': (n) => ({ name: `sweep-r-${n}`, cost: 2, tags: {} }),
  '/routers/{id}': (n) => ({ name: `sweep-r-${n}`, noTraversal: true }),
  '/terminators': (n) => ({
    service: pick(ownIds.get('/services'), n) ?? 'none',
    router: pick(ownIds.get('/edge-routers'), n) ?? pick(ownIds.get('/routers'), n) ?? 'none',
    binding: 'transport',
    address: `tcp:sweep-${n}:80`,
  }),
  '/terminators/{id}': (n) => ({ cost: n % 65536, precedence: 'default', tags: {} }),
  '/external-jwt-signers': (n) => ({
    name: `sweep-${n}`,
    enabled: true,
    issuer: `https://sweep-${n}.example`,
    audience: null,
    jwksEndpoint: `https://sweep-${n}.example/jwks`,
  }),
  '/external-jwt-signers/{id}': (n) => ({
    name: `sweep-${n}`,
    enabled: n % 2 === 0,
    issuer: `https://sweep-${n}.example`,
    audience: 'a',
    jwksEndpoint: `https://sweep-${n}.example/jwks`,
  }),
  '/controller-settings': (n) => ({
    controllerId: 'controller',
    oidc: { redirectUris: [`https://sweep-${n}.example/cb`] },
  }),
  '/controller-settings/{id}/effective': (n) => ({ oidc: { postLogoutUris: [`https://sweep-${n}.example/bye`] } }),
};

// Maps of a few very long values: together past an item's 400 KB, yet within the 1 MiB body limit.
const bigMapText = objectText(
  fc.constantFrom(120_000, 250_000).map((length) => JSON.stringify('x'.repeat(length))),
  3,
);
const fieldText = fc.oneof(jsonText, objectText(scalarText, 6), deepText, bigMapText);

function exampleText(example: (n: number) => Record<string, unknown>): fc.Arbitrary<string> {
  const fields = Object.keys(example(0));
  const overrides = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...fields), key), fieldText), { maxLength: 3 });
  return fc.tuple(fc.nat(), overrides).map(([n, replaced]) => {
    const entries = new Map(Object.entries(example(n)).map(([name, value]) => [name, JSON.stringify(value)]));
    for (const [name, text] of replaced) entries.set(name, text);
    return `{${[...entries].map(([name, text]) => `${JSON.stringify(name)}:${text}`).join(',')}}`;
  });
}

function bodyFor(route: Route): fc.Arbitrary<string> {
  const example = EXAMPLES[route.path];
  return example
    ? fc.oneof({ weight: 3, arbitrary: exampleText(example) }, { weight: 2, arbitrary: bodyText })
    : bodyText;
}

// --- Query strings ---------------------------------------------------------------------------------------------------

const filterText = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom(
    'name = ""',
    'name != "x"',
    'id = ""',
    'username = ""',
    'externalId = ""',
    'name contains "a" and isAdmin = true',
    'tags.env = "x"',
    'roleAttributes contains "a"',
    'createdAt > datetime(2024-01-01T00:00:00Z)',
    'true sort by name desc skip 5 limit 3',
    'id in ["a","b"]',
    `name = "${'x'.repeat(3000)}"`,
    'not (name = "a" or name = "b")',
    '(((((((((((',
    '"',
  ),
);
const numberParam = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom('', '-1', '0', '1e9', '99999999999999999999', 'NaN', 'abc', '1.5', ' 1'),
);
const roleFilterValue = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('#all', '#', '@', '#a', `#${'a'.repeat(3000)}`, '@no-such-id'),
);
const queryPair = fc.oneof(
  fc.tuple(fc.constant('filter'), filterText),
  fc.tuple(fc.constantFrom('sort', 'orderBy'), fc.constantFrom('name', 'name desc', 'id asc', 'nope', '', ',,')),
  fc.tuple(fc.constantFrom('limit', 'offset'), numberParam),
  fc.tuple(fc.constant('roleFilter'), roleFilterValue),
  fc.tuple(fc.constant('roleSemantic'), fc.constantFrom('allOf', 'anyOf', 'AllOf', '', 'junk')),
  fc.tuple(fc.constant('method'), fc.constantFrom('password', 'cert', 'ext-jwt', '', 'junk')),
  fc.tuple(fc.oneof(fc.constantFrom(...TRICKY_KEYS), fc.string({ maxLength: 8 })), fc.string({ maxLength: 8 })),
);
const queryText = fc
  .oneof(
    { weight: 4, arbitrary: fc.array(queryPair, { maxLength: 4 }) },
    // Many role filters at once.
    fc
      .tuple(fc.integer({ min: 2, max: 300 }), fc.string({ maxLength: 12 }))
      .map(([n, value]) => Array(n).fill(['roleFilter', `#${value}`])),
  )
  .map((pairs) => pairs.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&'))
  // Node refuses a request line and headers over 16 KiB before any code of ours runs (API Gateway at 10 KiB).
  .filter((query) => query.length < 12_000);

// Queries a route needs before it reads its body, with generated parameters after them.
const EXAMPLE_QUERIES: Readonly<Record<string, string>> = { '/authenticate': 'method=password' };

const rawQuery = fc.constantFrom('%', '%zz', '&&==&', 'filter=%E0%A4%A', '?', 'limit');

function queryFor(route: Route): fc.Arbitrary<string> {
  const generated = fc.oneof({ weight: 6, arbitrary: queryText }, rawQuery);
  const example = EXAMPLE_QUERIES[route.path];
  if (!example) return generated;
  return fc.oneof(
    generated,
    queryText.map((query) => (query ? `${example}&${query}` : example)),
  );
}

// --- The sweep -------------------------------------------------------------------------------------------------------

interface SweepRequest {
  readonly caller: Caller;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
}

const clip = (text: string, length: number) => (text.length > length ? `${text.slice(0, length)}…` : text);

function describeRequest(method: string, request: SweepRequest): string {
  return [
    `${method} ${clip(request.path, 300)} as ${request.caller}`,
    `headers: ${JSON.stringify(request.headers)}`,
    `body: ${request.body === undefined ? '(none)' : clip(request.body, 600)}`,
  ].join('\n');
}

// Names that are members of every object; a server that indexes plain objects by them misbehaves.
const extraHeaders = fc
  .constantFrom(
    ['constructor', 'x'],
    ['__proto__', 'x'],
    ['toString', 'x'],
    ['content-type', 'text/plain'],
    ['content-type', 'application/x-pem-file'],
    ['content-type', ''],
  )
  .map((header): Record<string, string> => Object.fromEntries([header]));

function requestsFor(route: Route): fc.Arbitrary<SweepRequest> {
  const resources = resourcesOf(route).map(({ resource }) => resource);
  const takesBody = route.method !== 'GET' && route.method !== 'DELETE';
  return fc
    .record({
      caller: fc.oneof(
        { weight: 5, arbitrary: fc.constant<Caller>(route.auth === 'none' ? 'anonymous' : 'admin') },
        { weight: 2, arbitrary: fc.constantFrom<Caller>('admin', 'user', 'anonymous') },
      ),
      resource: fc.constantFrom(...resources),
      id: idFor(route),
      query: queryFor(route),
      headers: fc.option(extraHeaders, { freq: 5, nil: {} }),
      body: takesBody ? bodyFor(route) : fc.option(bodyText, { freq: 5 }),
    })
    .map(({ caller, resource, id, query, headers, body }) => {
      const request: SweepRequest = {
        caller,
        path: `${resource.replace('{id}', id)}${query ? `?${query}` : ''}`,
        headers,
        body: body ?? undefined,
      };
      // Counterexamples print clipped: bodies run to hundreds of kilobytes.
      return Object.assign(request, { [fc.toStringMethod]: () => describeRequest(route.method, request) });
    });
}

function send(route: Route, request: SweepRequest): Promise<HttpResponse> {
  // Node's client frames no body of a GET or DELETE unless told its length.
  const body =
    request.body === undefined
      ? {}
      : {
          rawBody: request.body,
          headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(request.body)) },
        };
  return callAs(request.caller, route.method, request.path, {
    ...body,
    headers: { ...body.headers, ...request.headers },
  });
}

/**
 * Notes which ids of a collection exist now, and which of them the sweep made: runs delete and recreate entities, so
 * each route reads them afresh.
 */
async function refreshIds(collection: string): Promise<void> {
  const existing = new Set(existingIds.get(collection));
  const seen = [...(await idsIn(collection, 'admin')), ...(await idsIn(collection, 'user'))];
  ownIds.set(
    collection,
    [...new Set(seen)].filter((id) => !existing.has(id)),
  );
}

beforeAll(async () => {
  for (const collection of collections) existingIds.set(collection, await idsIn(collection, 'admin'));
  await createUser();
  await created('/auth-policies', authPolicyBody('sweep-policy', LOCKOUT));
  await created('/identities', { name: 'sweep-bystander', type: 'Router', isAdmin: false, roleAttributes: ['a'] });
});

describe('no generated request makes any route answer 5xx', () => {
  it.each(ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s',
    async (_, route) => {
      // The route's own collection, and identities, which bodies refer to.
      const collection = collectionOf(route);
      for (const refreshed of new Set(['/identities', ...(collection ? [collection] : [])]))
        await refreshIds(refreshed);
      await fc.assert(
        fc.asyncProperty(requestsFor(route), async (request) => {
          const logged = controller().logLines.length;
          const response = await send(route, request);
          if (response.status < 500) return;
          const faults = controller()
            .logLines.slice(logged)
            .filter((line) => line.includes('"level":"ERROR"'))
            .map((line) => clip(line, 600));
          expect.fail([`answered ${response.status}: ${describeRequest(route.method, request)}`, ...faults].join('\n'));
        }),
        // Shrinking a failure stops in time too; the counterexample found so far is reported.
        { numRuns: RUNS_PER_ROUTE, interruptAfterTimeLimit: RUNS_PER_ROUTE * 1_000 },
      );
    },
    RUNS_PER_ROUTE * 2_000 + 10_000,
  );
});
