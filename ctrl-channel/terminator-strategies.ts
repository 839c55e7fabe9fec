import { DEFAULT_TERMINATOR_STRATEGY, TERMINATOR_STRATEGIES } from '#shared/entities/service.ts';
import type { PRECEDENCES } from '#shared/schemas/precedence.ts';

/**
 * The terminator strategies a service names (`terminatorStrategy`), as the reference's `xt_smartrouting`, `xt_weighted`,
 * `xt_random` and `xt_sticky` pick: pure functions over the service's candidate terminators costed and sorted cheapest
 * first (`costedTerminators`). What a strategy learns from dials and circuits (the dynamic cost) is kept apart, in
 * `terminator-costs.ts`; a strategy reads it only through the route costs it is given.
 */

export type StrategyName = (typeof TERMINATOR_STRATEGIES)[number];
type Precedence = (typeof PRECEDENCES)[number];

/** What a strategy needs of a terminator. */
export interface Candidate {
  readonly id: string;
  readonly precedence: Precedence;
  /** The static cost its creator gave it (0–65535). */
  readonly cost: number;
}

/** A candidate with its route cost: static, dynamic and path cost together, biased into its precedence's band. */
export interface Costed<T extends Candidate> {
  readonly terminator: T;
  readonly routeCost: number;
}

/** What the dialer sent that a strategy may read: the sticky strategy's token, the terminator it was given before. */
export interface SelectionParams {
  readonly stickinessToken?: string;
}

/** The chosen terminator, and what the strategy adds to the dialer's peer data (the sticky token). */
export interface Selection<T extends Candidate> {
  readonly terminator: T;
  readonly peerData: ReadonlyMap<number, Buffer>;
}

/** A source of uniform numbers in [0, 1): `Math.random` in service, a seeded one in tests. */
export type RandomSource = () => number;

/** The reference's `XtStickinessToken` peer data header: the sticky strategy's terminator id, given and asked back. */
export const STICKINESS_TOKEN_HEADER = 1114;

// The reference's bands (`xt/costs.go`), with Go's integer division: every cost of a precedence is below every cost of
// the next one, so a cheap default terminator never beats an expensive required one.
const QUARTER = Math.floor(0xffff_ffff / 4);
const BANDS: Readonly<Record<Precedence, { readonly min: number; readonly max: number }>> = {
  required: { min: 0, max: QUARTER - 1 },
  default: { min: QUARTER, max: QUARTER * 2 - 1 },
  failed: { min: QUARTER * 2, max: QUARTER * 3 - 1 },
};

/** A cost moved into its precedence's band, capped at the band's top (the reference's `GetBiasedCost`). */
export function biasedCost(precedence: Precedence, unbiased: number): number {
  const band = BANDS[precedence];
  return unbiased > band.max - band.min ? band.max : band.min + unbiased;
}

/** A route cost back to the cost within its band (the reference's `Unbias`). */
export const unbiasedCost = (costed: Costed<Candidate>): number =>
  costed.routeCost - BANDS[costed.terminator.precedence].min;

/**
 * The candidates costed and sorted cheapest first, as the reference's `selectPath` prepares them for the strategy:
 * route cost = the band of the precedence + static cost + dynamic cost + path cost (0 on the dialer's own router).
 * Equal costs are ordered at random, as the reference's unstable sort leaves them, so that equals share the load.
 */
export function costedTerminators<T extends Candidate>(
  candidates: readonly T[],
  extraCostOf: (terminator: T) => number,
  random: RandomSource,
): Costed<T>[] {
  return candidates
    .map((terminator) => ({
      terminator,
      routeCost: biasedCost(terminator.precedence, terminator.cost + extraCostOf(terminator)),
      tieBreak: random(),
    }))
    .sort((a, b) => a.routeCost - b.routeCost || a.tieBreak - b.tieBreak)
    .map(({ terminator, routeCost }) => ({ terminator, routeCost }));
}

/** The leading run of the sorted list with the first one's precedence (the reference's `GetRelatedTerminators`). */
export function relatedTerminators<T extends Candidate>(sorted: readonly Costed<T>[]): Costed<T>[] {
  const [first] = sorted;
  if (!first) return [];
  const run: Costed<T>[] = [];
  for (const costed of sorted) {
    if (costed.terminator.precedence !== first.terminator.precedence) break;
    run.push(costed);
  }
  return run;
}

const NO_PEER_DATA: ReadonlyMap<number, Buffer> = new Map();

/** smartrouting: the cheapest. Its intelligence is the dynamic cost the route costs already carry. */
export function selectSmartrouting<T extends Candidate>(sorted: readonly Costed<T>[]): Selection<T> {
  return { terminator: firstOf(sorted).terminator, peerData: NO_PEER_DATA };
}

/**
 * weighted: at random among the leading precedence, each in inverse proportion to its share of the total cost
 * (weight 1 − cost/total, normalised; a cost of 0 counts as 1), as the reference's `xt_weighted`.
 */
export function selectWeighted<T extends Candidate>(sorted: readonly Costed<T>[], random: RandomSource): Selection<T> {
  const related = relatedTerminators(sorted);
  if (related.length <= 1) return selectSmartrouting(sorted);
  const costs = related.map((costed) => unbiasedCost(costed) || 1);
  const totalCost = costs.reduce((sum, cost) => sum + cost, 0);
  const weights = costs.map((cost) => 1 - cost / totalCost);
  const totalWeight = weights.reduce((sum, weight) => sum + weight, 0);
  const drawn = random();
  let cumulative = 0;
  for (const [index, weight] of weights.entries()) {
    cumulative += weight / totalWeight;
    if (drawn < cumulative) return { terminator: related[index]!.terminator, peerData: NO_PEER_DATA };
  }
  return selectSmartrouting(sorted);
}

/** random: uniform among the leading precedence; costs play no part beyond the precedence. */
export function selectRandom<T extends Candidate>(sorted: readonly Costed<T>[], random: RandomSource): Selection<T> {
  const related = relatedTerminators(sorted);
  const drawn = related[Math.floor(random() * related.length)] ?? firstOf(sorted);
  return { terminator: drawn.terminator, peerData: NO_PEER_DATA };
}

/**
 * sticky: the terminator the dialer's token names, when it is among the leading precedence; otherwise the cheapest.
 * Either way the dialer is given the chosen one's id as its token, to send on its next dial.
 */
export function selectSticky<T extends Candidate>(sorted: readonly Costed<T>[], params: SelectionParams): Selection<T> {
  const named = relatedTerminators(sorted).find((costed) => costed.terminator.id === params.stickinessToken);
  const terminator = (named ?? firstOf(sorted)).terminator;
  return { terminator, peerData: new Map([[STICKINESS_TOKEN_HEADER, Buffer.from(terminator.id)]]) };
}

/** The strategy a service's name stands for; a name this controller does not know, as the default, reported unknown. */
export function strategyNamed(name: string): { readonly strategy: StrategyName; readonly known: boolean } {
  const known = (TERMINATOR_STRATEGIES as readonly string[]).includes(name);
  return { strategy: known ? (name as StrategyName) : DEFAULT_TERMINATOR_STRATEGY, known };
}

/** Whether the strategy learns from dials and circuits: all but random, which the reference gives no cost visitor. */
export const keepsCosts = (strategy: StrategyName): boolean => strategy !== 'random';

/** The terminator a strategy picks from the candidates, costed and sorted (at least one). */
export function selectTerminator<T extends Candidate>(
  strategy: StrategyName,
  sorted: readonly Costed<T>[],
  params: SelectionParams,
  random: RandomSource,
): Selection<T> {
  switch (strategy) {
    case 'smartrouting':
      return selectSmartrouting(sorted);
    case 'weighted':
      return selectWeighted(sorted, random);
    case 'random':
      return selectRandom(sorted, random);
    case 'sticky':
      return selectSticky(sorted, params);
  }
}

function firstOf<T extends Candidate>(sorted: readonly Costed<T>[]): Costed<T> {
  const [first] = sorted;
  if (!first) throw new Error('a terminator strategy was given no candidates');
  return first;
}
