import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { TABLE_KEYS } from '#shared/store/table-definition.ts';
import { resolveControllerSettings } from '../../cdk/controller-settings.ts';
import { ControllerStack } from '../../cdk/controller-stack.ts';
import { ControllerTable } from '../../cdk/controller-table.ts';
import { DEFAULT_PROVISIONED_CAPACITY, type TableCapacity, tableCapacityOf } from '../../cdk/table-capacity.ts';

function tableTemplate(capacity?: TableCapacity): Template {
  const stack = new Stack(new App(), 'Capacity');
  new ControllerTable(stack, 'Table', capacity);
  return Template.fromStack(stack);
}

interface ScalableTarget {
  readonly ResourceId: unknown;
  readonly ScalableDimension: string;
  readonly MinCapacity: number;
  readonly MaxCapacity: number;
}

/** Only `managementOnly`: the settings read without the domains SDKs need (refused otherwise). */
const managementOnly = (key: string) => (key === 'managementOnly' ? 'true' : undefined);

describe('table capacity', () => {
  it('bills the table on demand by default, with no capacity on it or its indexes and no auto scaling', () => {
    const template = tableTemplate();
    template.hasResourceProperties('AWS::DynamoDB::Table', { BillingMode: 'PAY_PER_REQUEST' });
    const [table] = Object.values(template.findResources('AWS::DynamoDB::Table'));
    expect(JSON.stringify(table)).not.toContain('ProvisionedThroughput');
    template.resourceCountIs('AWS::ApplicationAutoScaling::ScalableTarget', 0);
  });

  it('provisions the table and each index at the minimum, auto scaled between the minimum and maximum to the target', () => {
    const capacity = { read: { min: 7, max: 700 }, write: { min: 3, max: 300 }, targetUtilizationPercent: 65 };
    const template = tableTemplate(capacity);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      // CloudFormation's default billing mode: CDK leaves it out.
      BillingMode: Match.absent(),
      ProvisionedThroughput: { ReadCapacityUnits: 7, WriteCapacityUnits: 3 },
    });
    const [table] = Object.values(template.findResources('AWS::DynamoDB::Table'));
    const indexes =
      (table?.Properties as { GlobalSecondaryIndexes?: { IndexName: string; ProvisionedThroughput: unknown }[] })
        ?.GlobalSecondaryIndexes ?? [];
    expect(indexes.map((index) => [index.IndexName, index.ProvisionedThroughput])).toEqual(
      TABLE_KEYS.indexes.map((index) => [index.name, { ReadCapacityUnits: 7, WriteCapacityUnits: 3 }]),
    );

    const targets = Object.values(template.findResources('AWS::ApplicationAutoScaling::ScalableTarget')).map(
      (target) => target.Properties as ScalableTarget,
    );
    const ranges = targets.map((target) => [target.ScalableDimension, target.MinCapacity, target.MaxCapacity]);
    expect(ranges.filter(([dimension]) => dimension === 'dynamodb:table:ReadCapacityUnits')).toEqual([
      ['dynamodb:table:ReadCapacityUnits', 7, 700],
    ]);
    expect(ranges.filter(([dimension]) => dimension === 'dynamodb:table:WriteCapacityUnits')).toEqual([
      ['dynamodb:table:WriteCapacityUnits', 3, 300],
    ]);
    const indexRanges = ranges.filter(([dimension]) => String(dimension).startsWith('dynamodb:index:'));
    expect(indexRanges).toHaveLength(TABLE_KEYS.indexes.length * 2);
    for (const index of TABLE_KEYS.indexes) {
      const ofIndex = targets.filter((target) => JSON.stringify(target.ResourceId).includes(`/index/${index.name}`));
      expect(ofIndex.map((target) => [target.ScalableDimension, target.MinCapacity, target.MaxCapacity])).toEqual(
        expect.arrayContaining([
          ['dynamodb:index:ReadCapacityUnits', 7, 700],
          ['dynamodb:index:WriteCapacityUnits', 3, 300],
        ]),
      );
    }

    const policies = Object.values(template.findResources('AWS::ApplicationAutoScaling::ScalingPolicy'));
    expect(policies).toHaveLength(targets.length);
    for (const policy of policies) {
      expect(policy.Properties.TargetTrackingScalingPolicyConfiguration).toMatchObject({ TargetValue: 65 });
    }
  });

  it('reads the billing mode and capacity from settings, the defaults filling the rest', () => {
    const settings = resolveControllerSettings(managementOnly, {
      ZITI_TABLE_BILLING_MODE: 'provisioned',
      ZITI_TABLE_READ_CAPACITY_MAX: '900',
    });
    expect(tableCapacityOf(settings)).toEqual({
      ...DEFAULT_PROVISIONED_CAPACITY,
      read: { min: DEFAULT_PROVISIONED_CAPACITY.read.min, max: 900 },
    });
    expect(tableCapacityOf(resolveControllerSettings(managementOnly, {}))).toBe('on-demand');
  });

  it('refuses capacity that cannot work, capacity without provisioning, and capacity for an imported table', () => {
    const resolve = (env: Record<string, string>) => () => resolveControllerSettings(managementOnly, env);
    const provisioned = { ZITI_TABLE_BILLING_MODE: 'provisioned' };
    expect(resolve({ ZITI_TABLE_BILLING_MODE: 'reserved' })).toThrow(/tableBillingMode must be one of/);
    expect(resolve({ ZITI_TABLE_READ_CAPACITY_MIN: '5' })).toThrow(
      /tableReadCapacityMin is for tableBillingMode provisioned/,
    );
    expect(
      resolve({ ...provisioned, ZITI_TABLE_WRITE_CAPACITY_MIN: '50', ZITI_TABLE_WRITE_CAPACITY_MAX: '10' }),
    ).toThrow(/write capacity minimum \(50\) is above its maximum \(10\)/);
    expect(resolve({ ...provisioned, ZITI_TABLE_READ_CAPACITY_MIN: '0' })).toThrow(/at least 1/);
    expect(resolve({ ...provisioned, ZITI_TABLE_TARGET_UTILIZATION: '95' })).toThrow(/from 20 to 90/);
    expect(resolve({ ...provisioned, ZITI_TABLE_NAME: 'restored-table' })).toThrow(
      /with tableName the table is the operator's/,
    );
    expect(
      () => new ControllerStack(new App(), 'Refused', { tableBillingMode: 'provisioned', tableTargetUtilization: 10 }),
    ).toThrow(/from 20 to 90/);
  });
});
