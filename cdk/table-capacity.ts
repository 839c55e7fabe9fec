import { BillingMode, type Table } from 'aws-cdk-lib/aws-dynamodb';
import { TABLE_KEYS } from '#shared/store/table-definition.ts';

/** The settings that choose how the table is billed (README, "Table capacity"). */
export interface TableCapacitySettings {
  /**
   * `on-demand` (the default): billed per request, nothing when idle, no capacity to plan. `provisioned`: billed per
   * hour of capacity, scaled between the minimum and maximum below: at a steady load and a 70% target, a read costs
   * about $0.05 per million against on-demand's $0.125 and a write $0.26 against $0.625 (us-east-1), so a fleet's
   * round-the-clock traffic costs less than half.
   */
  readonly tableBillingMode?: TableBillingMode;
  /** Read capacity units the table and each index keep at least (provisioned only). */
  readonly tableReadCapacityMin?: number;
  /** Read capacity units auto scaling may raise the table and each index to (provisioned only). */
  readonly tableReadCapacityMax?: number;
  readonly tableWriteCapacityMin?: number;
  readonly tableWriteCapacityMax?: number;
  /** The consumed share of provisioned capacity auto scaling keeps to, in percent (20 to 90; provisioned only). */
  readonly tableTargetUtilization?: number;
}

export type TableBillingMode = 'on-demand' | 'provisioned';

export const TABLE_BILLING_MODES: readonly TableBillingMode[] = ['on-demand', 'provisioned'];

export interface CapacityRange {
  readonly min: number;
  readonly max: number;
}

/** Provisioned capacity with auto scaling, the same for the table and each of its global secondary indexes. */
export interface ProvisionedCapacity {
  readonly read: CapacityRange;
  readonly write: CapacityRange;
  readonly targetUtilizationPercent: number;
}

/** How the table is billed: per request, or provisioned capacity under auto scaling. */
export type TableCapacity = 'on-demand' | ProvisionedCapacity;

/**
 * Provisioned capacity unless set: a minimum a small network idles at for a few dollars a month, a maximum with room
 * for a 10,000-device fleet's peaks, and auto scaling's usual 70% target, which leaves the headroom a burst needs
 * while scaling out (DynamoDB's burst capacity covers the minutes that takes).
 */
export const DEFAULT_PROVISIONED_CAPACITY: ProvisionedCapacity = {
  read: { min: 25, max: 2500 },
  write: { min: 10, max: 1000 },
  targetUtilizationPercent: 70,
};

/** DynamoDB auto scaling's range of target utilization. */
const TARGET_UTILIZATION = { min: 20, max: 90 } as const;

const CAPACITY_KEYS = [
  'tableReadCapacityMin',
  'tableReadCapacityMax',
  'tableWriteCapacityMin',
  'tableWriteCapacityMax',
  'tableTargetUtilization',
] as const;

/** The capacity the settings ask for, the defaults filling what they leave out. */
export function tableCapacityOf(settings: TableCapacitySettings): TableCapacity {
  if (settings.tableBillingMode !== 'provisioned') return 'on-demand';
  const defaults = DEFAULT_PROVISIONED_CAPACITY;
  return {
    read: {
      min: settings.tableReadCapacityMin ?? defaults.read.min,
      max: settings.tableReadCapacityMax ?? defaults.read.max,
    },
    write: {
      min: settings.tableWriteCapacityMin ?? defaults.write.min,
      max: settings.tableWriteCapacityMax ?? defaults.write.max,
    },
    targetUtilizationPercent: settings.tableTargetUtilization ?? defaults.targetUtilizationPercent,
  };
}

/** Why the capacity settings cannot make a working table, or undefined when they can. */
export function tableCapacityProblem(
  settings: TableCapacitySettings & { readonly tableName?: string },
): string | undefined {
  const mode = settings.tableBillingMode;
  if (mode !== undefined && !TABLE_BILLING_MODES.includes(mode)) {
    return `tableBillingMode must be one of ${TABLE_BILLING_MODES.join(', ')}, got ${JSON.stringify(mode)}`;
  }
  const given = CAPACITY_KEYS.find((key) => settings[key] !== undefined);
  if (mode === undefined && given === undefined) return undefined;
  if (settings.tableName !== undefined) {
    return "tableBillingMode and the capacity settings are for the stack's own table: with tableName the table is the operator's";
  }
  if (mode !== 'provisioned') {
    return given === undefined ? undefined : `${given} is for tableBillingMode provisioned`;
  }
  const capacity = tableCapacityOf(settings);
  if (capacity === 'on-demand') return undefined;
  for (const [name, range] of Object.entries({ read: capacity.read, write: capacity.write })) {
    if (!Number.isInteger(range.min) || !Number.isInteger(range.max) || range.min < 1) {
      return `The table's ${name} capacity must be whole units of at least 1, got ${range.min} to ${range.max}`;
    }
    if (range.min > range.max) {
      return `The table's ${name} capacity minimum (${range.min}) is above its maximum (${range.max})`;
    }
  }
  const target = capacity.targetUtilizationPercent;
  if (!Number.isFinite(target) || target < TARGET_UTILIZATION.min || target > TARGET_UTILIZATION.max) {
    return `tableTargetUtilization must be a percentage from ${TARGET_UTILIZATION.min} to ${TARGET_UTILIZATION.max}, got ${target}`;
  }
  return undefined;
}

/** The billing properties of the table (and the capacity each index starts at). */
export function tableBillingProps(capacity: TableCapacity): {
  billingMode: BillingMode;
  readCapacity?: number;
  writeCapacity?: number;
} {
  if (capacity === 'on-demand') return { billingMode: BillingMode.PAY_PER_REQUEST };
  return { billingMode: BillingMode.PROVISIONED, readCapacity: capacity.read.min, writeCapacity: capacity.write.min };
}

/** The capacity a global secondary index starts at: none to give on demand, the minimum when provisioned. */
export function indexCapacityProps(capacity: TableCapacity): { readCapacity?: number; writeCapacity?: number } {
  if (capacity === 'on-demand') return {};
  return { readCapacity: capacity.read.min, writeCapacity: capacity.write.min };
}

/**
 * Auto scaling of provisioned capacity, on the table and each global secondary index: an index short of write
 * capacity throttles the table's writes too, so each scales as the table does.
 */
export function autoScaleTable(table: Table, capacity: TableCapacity): void {
  if (capacity === 'on-demand') return;
  const utilization = { targetUtilizationPercent: capacity.targetUtilizationPercent };
  const read = { minCapacity: capacity.read.min, maxCapacity: capacity.read.max };
  const write = { minCapacity: capacity.write.min, maxCapacity: capacity.write.max };
  table.autoScaleReadCapacity(read).scaleOnUtilization(utilization);
  table.autoScaleWriteCapacity(write).scaleOnUtilization(utilization);
  for (const index of TABLE_KEYS.indexes) {
    table.autoScaleGlobalSecondaryIndexReadCapacity(index.name, read).scaleOnUtilization(utilization);
    table.autoScaleGlobalSecondaryIndexWriteCapacity(index.name, write).scaleOnUtilization(utilization);
  }
}
