import { describe, expect, it } from 'vitest';
import { createLogger } from '#shared/log/logger.ts';
import { lambdaContext } from '../support/lambda-event.ts';

describe('createLogger', () => {
  it('writes one JSON line with the context and fields', () => {
    const lines: string[] = [];
    const logger = createLogger({ requestId: 'r1' }, { write: (line) => lines.push(line) });

    logger.info('hello', { status: 200 });

    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'INFO', message: 'hello', requestId: 'r1', status: 200 });
  });

  it('redacts secrets by key name at any depth', () => {
    const lines: string[] = [];
    const logger = createLogger({}, { write: (line) => lines.push(line) }).child({ token: 'child-secret' });

    logger.info('login', {
      body: {
        username: 'admin',
        password: 'p4ssword',
        nested: [{ currentPassword: 'old', Authorization: 'Bearer x' }],
      },
      'zt-session': 'abc',
    });

    expect(lines[0]).not.toMatch(/p4ssword|old|Bearer x|abc|child-secret/);
    expect(JSON.parse(lines[0]!).body.username).toBe('admin');
  });

  it('drops lines below its level', () => {
    const lines: string[] = [];
    const logger = createLogger({}, { level: 'warn', write: (line) => lines.push(line) });

    logger.info('quiet');
    logger.error('loud');

    expect(lines.map((line) => JSON.parse(line).message)).toEqual(['loud']);
  });

  it('keeps a detached logger apart from the Lambda context an invocation gives the shared one', () => {
    const lines: string[] = [];
    const logger = createLogger({}, { write: (line) => lines.push(line) });
    const detached = logger.detached({ endpointId: 'e1' });

    logger.powertools.addContext(lambdaContext({ awsRequestId: 'invocation-1', functionName: 'local-routers' }));
    logger.info('in the invocation');
    detached.info('beside it');

    const [invocation, beside] = lines.map((line) => JSON.parse(line));
    expect(invocation).toMatchObject({ function_request_id: 'invocation-1' });
    expect(beside).toMatchObject({ message: 'beside it', endpointId: 'e1' });
    expect(beside).not.toHaveProperty('function_request_id');
    expect(beside).not.toHaveProperty('function_name');
  });
});
