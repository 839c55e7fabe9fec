import { describe, expect, it } from 'vitest';
import { START_TIMEOUT_VARIABLE, startDynamoDbLocal, startTimeoutMs } from '#local/dynamodb-local.ts';

describe('the DynamoDB Local start deadline', () => {
  it('is 180 s unless DYNAMODB_LOCAL_START_TIMEOUT_SECONDS says otherwise', () => {
    expect(START_TIMEOUT_VARIABLE).toBe('DYNAMODB_LOCAL_START_TIMEOUT_SECONDS');
    expect(startTimeoutMs({})).toBe(180_000);
    expect(startTimeoutMs({ DYNAMODB_LOCAL_START_TIMEOUT_SECONDS: '' })).toBe(180_000);
    expect(startTimeoutMs({ DYNAMODB_LOCAL_START_TIMEOUT_SECONDS: '300' })).toBe(300_000);
    expect(startTimeoutMs({ DYNAMODB_LOCAL_START_TIMEOUT_SECONDS: '2.5' })).toBe(2_500);
  });

  it('refuses a setting that is not a positive number of seconds, naming it', () => {
    for (const value of ['0', '-5', 'soon', 'Infinity']) {
      expect(() => startTimeoutMs({ DYNAMODB_LOCAL_START_TIMEOUT_SECONDS: value }), value).toThrow(
        `DYNAMODB_LOCAL_START_TIMEOUT_SECONDS must be a number of seconds above 0, not "${value}"`,
      );
    }
  });

  it('when passed, fails the start with the time waited and the setting that changes it', async () => {
    await expect(startDynamoDbLocal({ startTimeoutMs: 1 })).rejects.toThrow(
      /^DynamoDB Local did not answer within 0\.001 s \(DYNAMODB_LOCAL_START_TIMEOUT_SECONDS sets it\)/,
    );
  });
});
