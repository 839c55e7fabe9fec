import type { ConfigType } from './config-type.ts';

/**
 * The config types every controller starts with, under the ids and names the reference seeds them with (clients and
 * tunnelers look them up by these), with schemas that accept and refuse what the reference's do.
 */
export type BuiltinConfigType = Pick<ConfigType, 'id' | 'name' | 'target' | 'schema'>;

type Schema = ConfigType['schema'];

const uint16 = { type: 'integer', minimum: 0, maximum: 65535 };
const ref = (name: string): Schema => ({ $ref: `#/definitions/${name}` });
/** A non-empty set of items of one definition. */
const setOf = (item: string, description?: string): Schema => ({
  allOf: [ref('inhabitedSet'), { items: ref(item) }],
  ...(description ? { description } : {}),
});
const objectOf = (properties: Schema, required: string[] = []): Schema => ({
  type: 'object',
  additionalProperties: false,
  ...(required.length > 0 ? { required } : {}),
  properties,
});

/** Health checks a hosting tunneler runs against the server it dials. */
const healthCheckDefinitions: Schema = {
  duration: { type: 'string', pattern: '[0-9]+(h|m|s|ms)' },
  method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH'] },
  action: objectOf(
    {
      trigger: { type: 'string', enum: ['fail', 'pass', 'change'] },
      consecutiveEvents: uint16,
      duration: ref('duration'),
      action: { type: 'string', pattern: '(mark (un)?healthy|increase cost [0-9]+|decrease cost [0-9]+|send event)' },
    },
    ['trigger', 'action'],
  ),
  actionList: { type: 'array', items: ref('action'), minItems: 1, maxItems: 20 },
  portCheck: objectOf(
    { interval: ref('duration'), timeout: ref('duration'), address: { type: 'string' }, actions: ref('actionList') },
    ['interval', 'timeout', 'address'],
  ),
  httpCheck: objectOf(
    {
      url: { type: 'string' },
      method: ref('method'),
      body: { type: 'string' },
      interval: ref('duration'),
      timeout: ref('duration'),
      actions: ref('actionList'),
      expectStatus: { type: 'integer', minimum: 100, maximum: 599 },
      expectInBody: { type: 'string' },
    },
    ['interval', 'timeout', 'url'],
  ),
  portCheckList: { type: 'array', items: ref('portCheck') },
  httpCheckList: { type: 'array', items: ref('httpCheck') },
};
const healthCheckProperties: Schema = { portChecks: ref('portCheckList'), httpChecks: ref('httpCheckList') };

const addressTranslation = (format: 'ipv4' | 'ipv6', maxPrefix: number): Schema =>
  objectOf({
    from: { type: 'string', format },
    to: { type: 'string', format },
    prefixLength: { type: 'integer', minimum: 0, maximum: maxPrefix },
  });

/** Addresses, ports and protocols that intercepting and hosting tunnelers share. */
const tunnelDefinitions: Schema = {
  dialAddress: { type: 'string', format: 'idn-hostname', not: { pattern: '^$' } },
  // Hostnames, IP addresses, wildcards and CIDRs alike: clients tell them apart when they read the address.
  listenAddress: { type: 'string', format: 'idn-hostname', not: { pattern: '^$' } },
  inhabitedSet: { type: 'array', minItems: 1, uniqueItems: true },
  portNumber: uint16,
  portRange: objectOf({ low: ref('portNumber'), high: ref('portNumber') }, ['low', 'high']),
  protocolName: { type: 'string', enum: ['tcp', 'udp'] },
  timeoutSeconds: { type: 'integer', minimum: 0, maximum: 2147483647 },
  proxyType: { type: 'string', enum: ['http'], description: 'supported proxy types' },
  proxyConfiguration: {
    type: 'object',
    required: ['type', 'address'],
    properties: {
      type: { ...ref('proxyType'), description: 'The type of the proxy being used' },
      address: { type: 'string', description: 'The address of the proxy in host:port format' },
    },
  },
  ipv4AddressTranslation: addressTranslation('ipv4', 32),
  ipv6AddressTranslation: addressTranslation('ipv6', 128),
  addressTranslation: { oneOf: [ref('ipv4AddressTranslation'), ref('ipv6AddressTranslation')] },
};

/** Either a fixed value to dial, or "forward what was intercepted" with the set of values allowed. */
const fixedOrForwarded = (fixed: string, forward: string, allowed: string): Schema => ({
  if: { properties: { [forward]: { const: true } }, required: [forward] },
  // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword, never awaited
  then: { required: [allowed] },
  else: { required: [fixed] },
});
const forwardFlag = (what: string): Schema => ({
  type: 'boolean',
  enum: [true],
  description: `Dial the ${what} that was intercepted at the client tunneler.`,
});

/** One way of hosting a service (host.v1, and each terminator of host.v2), without its definitions. */
const hostSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...healthCheckProperties,
    protocol: { ...ref('protocolName'), description: 'Dial this protocol.' },
    forwardProtocol: forwardFlag('protocol'),
    allowedProtocols: setOf('protocolName', 'Protocols that may be forwarded.'),
    address: { ...ref('dialAddress'), description: 'Dial this IP address or hostname.' },
    forwardAddress: forwardFlag('address'),
    allowedAddresses: setOf('listenAddress', 'Addresses that may be forwarded.'),
    forwardAddressTranslations: setOf('addressTranslation', 'Translations applied to forwarded addresses.'),
    port: { ...ref('portNumber'), description: 'Dial this port.' },
    forwardPort: forwardFlag('port'),
    allowedPortRanges: setOf('portRange', 'Ports that may be forwarded.'),
    allowedSourceAddresses: setOf('listenAddress', 'Source addresses the hosting tunneler routes locally.'),
    listenOptions: objectOf({
      connectTimeoutSeconds: { ...ref('timeoutSeconds'), deprecated: true },
      connectTimeout: ref('duration'),
      maxConnections: { type: 'integer', minimum: 1 },
      identity: { type: 'string' },
      bindUsingEdgeIdentity: { type: 'boolean' },
      cost: { type: 'integer', minimum: 0, maximum: 65535 },
      precedence: { type: 'string', enum: ['default', 'required', 'failed'] },
    }),
    proxy: { ...ref('proxyConfiguration'), description: 'Send outgoing connections through this proxy.' },
  },
  allOf: [
    fixedOrForwarded('protocol', 'forwardProtocol', 'allowedProtocols'),
    fixedOrForwarded('address', 'forwardAddress', 'allowedAddresses'),
    fixedOrForwarded('port', 'forwardPort', 'allowedPortRanges'),
  ],
};
const hostDefinitions: Schema = { ...healthCheckDefinitions, ...tunnelDefinitions };

const clientV1: Schema = {
  $id: 'http://edge.openziti.org/schemas/ziti-tunneler-client.v1.config.json',
  ...objectOf({ hostname: { type: 'string' }, port: uint16 }, ['hostname', 'port']),
};

const serverV1: Schema = {
  $id: 'http://edge.openziti.org/schemas/ziti-tunneler-server.v1.config.json',
  definitions: healthCheckDefinitions,
  ...objectOf(
    {
      protocol: { type: ['string', 'null'], enum: ['tcp', 'udp'] },
      hostname: { type: 'string' },
      port: uint16,
      ...healthCheckProperties,
    },
    ['hostname', 'port'],
  ),
};

const interceptV1: Schema = {
  $id: 'http://edge.openziti.org/schemas/intercept.v1.config.json',
  definitions: tunnelDefinitions,
  ...objectOf(
    {
      protocols: setOf('protocolName'),
      addresses: setOf('listenAddress'),
      portRanges: setOf('portRange'),
      dialOptions: objectOf({ identity: { type: 'string' }, connectTimeoutSeconds: ref('timeoutSeconds') }),
      sourceIp: { type: 'string', description: 'The source IP (and optional :port) the hosting tunneler spoofs.' },
      allowedSourceAddresses: setOf('listenAddress', 'Source addresses that may be intercepted; all when unset.'),
    },
    ['protocols', 'addresses', 'portRanges'],
  ),
};

const hostV1: Schema = {
  $id: 'http://ziti-edge.netfoundry.io/schemas/host.v1.schema.json',
  definitions: hostDefinitions,
  ...hostSchema,
};

const hostV2: Schema = {
  $id: 'http://ziti-edge.netfoundry.io/schemas/host.v2.schema.json',
  definitions: {
    ...hostDefinitions,
    terminator: hostSchema,
    terminatorList: { type: 'array', minItems: 1, items: ref('terminator') },
  },
  ...objectOf({ terminators: ref('terminatorList') }, ['terminators']),
};

export const BUILTIN_CONFIG_TYPES: readonly BuiltinConfigType[] = [
  { id: 'f2dd2df0-9c04-4b84-a91e-71437ac229f1', name: 'ziti-tunneler-client.v1', target: 'service', schema: clientV1 },
  { id: 'cea49285-6c07-42cf-9f52-09a9b115c783', name: 'ziti-tunneler-server.v1', target: 'service', schema: serverV1 },
  { id: 'g7cIWbcGg', name: 'intercept.v1', target: 'service', schema: interceptV1 },
  { id: 'NH5p4FpGR', name: 'host.v1', target: 'service', schema: hostV1 },
  { id: 'host.v2', name: 'host.v2', target: 'service', schema: hostV2 },
];
