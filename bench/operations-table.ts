import { unitsByTargetText } from './capacity-tally.ts';
import { costPerMillion } from './cost-per-million.ts';
import { markdownTable } from './markdown-table.ts';
import type { OperationFigures } from './measure-operation.ts';

export const ms = (value: number) => value.toFixed(1);
export const perOp = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(2));
/** Request units: halves are common (eventually consistent reads), so up to two decimals, no trailing zeros. */
export const units = (value: number) => String(Math.round(value * 100) / 100);
export const dollars = (value: number) => `$${value.toFixed(2)}`;

export function byOperation(figures: OperationFigures): string {
  return [...figures.requestsByOperation]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([operation, count]) => `${operation} ${perOp(count)}`)
    .join(', ');
}

/** `R table 2, GSI1 0.5 · W table 3, GSI3 2`: the units per run by table and index. */
export function unitsByTarget(figures: OperationFigures): string {
  const read = unitsByTargetText(figures.capacityPerOp.read, units);
  const write = unitsByTargetText(figures.capacityPerOp.write, units);
  return [read && `R ${read}`, write && `W ${write}`].filter(Boolean).join(' · ');
}

/** `entity-or-link 6, idOrder 2, ...`: the table's write units per run by kind of item, largest first. */
export function unitsByKind(figures: OperationFigures): string {
  return [...figures.writeUnitsByKind]
    .sort(([, a], [, b]) => b - a)
    .map(([kind, value]) => `${kind} ${units(value)}`)
    .join(', ');
}

/** One operation's columns after its label: what it costs in requests, waves, units and dollars. */
export const FIGURE_HEADERS = [
  'n',
  'p50 ms',
  'p95 ms',
  'waves/op',
  'requests/op',
  'RRU/op',
  'WRU/op',
  '$/M backend',
  '$/M all-in',
  'by DynamoDB operation',
  'units by table and index',
  'table WRU by item kind',
] as const;
export const FIGURE_NUMERIC = [true, true, true, true, true, true, true, true, true, false, false, false] as const;

export function figureCells(figures: OperationFigures): string[] {
  const cost = costPerMillion(figures);
  return [
    String(figures.iterations),
    ms(figures.p50Ms),
    ms(figures.p95Ms),
    perOp(figures.wavesPerOp),
    perOp(figures.requestsPerOp),
    units(figures.readUnitsPerOp),
    units(figures.writeUnitsPerOp),
    dollars(cost.backend),
    dollars(cost.allIn),
    byOperation(figures),
    unitsByTarget(figures),
    unitsByKind(figures),
  ];
}

/** Cells for a row that could not be measured. */
export function failedCells(reason: string): string[] {
  return ['', `failed: ${reason}`, ...FIGURE_HEADERS.slice(2).map(() => '')];
}

/** Notes for the rows that made KMS requests or requests the units leave out. */
export function figureNotes(rows: readonly { label: string; figures: OperationFigures | string }[]): string[] {
  return rows.flatMap(({ label, figures }) => {
    if (typeof figures === 'string') return [];
    const notes: string[] = [];
    if (figures.kmsPerOp > 0) notes.push(`${label}: ${perOp(figures.kmsPerOp)} KMS requests per run.`);
    for (const [reason, count] of figures.unpricedPerOp) {
      notes.push(`${label}: ${perOp(count)} ${reason} per run, left out of the units (AWS reports none).`);
    }
    return notes;
  });
}

/** The standard table of measured operations. */
export function operationsTable(rows: readonly { label: string; figures: OperationFigures | string }[]): string {
  const table = markdownTable(
    ['operation', ...FIGURE_HEADERS],
    rows.map(({ label, figures }) => [
      label,
      ...(typeof figures === 'string' ? failedCells(figures) : figureCells(figures)),
    ]),
    [false, ...FIGURE_NUMERIC],
  );
  const notes = figureNotes(rows);
  return notes.length > 0 ? [table, '', ...notes].join('\n') : table;
}
