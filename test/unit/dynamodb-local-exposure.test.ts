import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { describe, expect, inject, it } from 'vitest';

// The run's DynamoDB Local, started by the global setup through startDynamoDbLocal.
const endpoint = new URL(inject('dynamoEndpoint'));
const port = Number(endpoint.port);

/** Whether a TCP connection to `host:port` is accepted. */
function accepts(host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 5_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const listTables = (headers: Record<string, string>) =>
  fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'DynamoDB_20120810.ListTables',
      authorization:
        'AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
      ...headers,
    },
    body: '{}',
  });

describe('DynamoDB Local', () => {
  it('answers on 127.0.0.1', async () => {
    expect(endpoint.hostname).toBe('127.0.0.1');
    expect(await accepts('127.0.0.1')).toBe(true);
  });

  // Any other address of this machine would do; 127.0.0.2 is one on every Linux machine, and connecting to it never
  // leaves the machine. A server listening on every interface accepts it.
  it.runIf(process.platform === 'linux')('refuses a connection to another address of this machine', async () => {
    expect(await accepts('127.0.0.2')).toBe(false);
  });

  it('gives a browser page from another origin no CORS grant', async () => {
    const origin = 'https://attacker.example';
    const response = await listTables({ origin });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetch(endpoint, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-amz-target' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  it.runIf(process.platform === 'linux')('runs with its telemetry turned off', () => {
    const argv = readFileSync(`/proc/${inject('dynamoPid')}/cmdline`, 'utf8').split('\0');
    expect(argv).toContain('-disableTelemetry');
  });
});
