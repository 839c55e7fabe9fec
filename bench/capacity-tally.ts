/** Where capacity was consumed: `table` (the base table) or a global secondary index by name. */
export const TABLE_TARGET = 'table';

/** Request units by where they were consumed. */
export type UnitsByTarget = ReadonlyMap<string, number>;

/** Read and write request units, each by table and index. */
export interface CapacityFigures {
  readonly read: UnitsByTarget;
  readonly write: UnitsByTarget;
}

export type CapacityKind = keyof CapacityFigures;

/** A running sum of request units. */
export class CapacityTally {
  private readonly units = { read: new Map<string, number>(), write: new Map<string, number>() };

  add(kind: CapacityKind, target: string, units: number): void {
    if (units === 0) return;
    const map = this.units[kind];
    map.set(target, (map.get(target) ?? 0) + units);
  }

  snapshot(): CapacityFigures {
    return { read: new Map(this.units.read), write: new Map(this.units.write) };
  }
}

function unitsBetween(before: UnitsByTarget, after: UnitsByTarget, divisor: number): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [target, units] of after) {
    const consumed = units - (before.get(target) ?? 0);
    if (consumed > 1e-9) delta.set(target, consumed / divisor);
  }
  return delta;
}

/** What was consumed between two snapshots, divided by `runs` (per operation). */
export function capacityBetween(before: CapacityFigures, after: CapacityFigures, runs = 1): CapacityFigures {
  return { read: unitsBetween(before.read, after.read, runs), write: unitsBetween(before.write, after.write, runs) };
}

export function totalUnits(units: UnitsByTarget): number {
  let total = 0;
  for (const value of units.values()) total += value;
  return total;
}

/** `table 2, GSI1 0.5`: the targets in a stable order (the table first). */
export function unitsByTargetText(units: UnitsByTarget, format: (value: number) => string): string {
  return [...units]
    .sort(([a], [b]) => (a === TABLE_TARGET ? -1 : b === TABLE_TARGET ? 1 : a.localeCompare(b)))
    .map(([target, value]) => `${target} ${format(value)}`)
    .join(', ');
}
