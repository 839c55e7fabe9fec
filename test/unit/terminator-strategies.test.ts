import { describe, expect, it } from 'vitest';
import { idleTooLong } from '#ctrl-channel/circuit-max-idle.ts';
import { CREDIT_PERIOD_MS, createTerminatorCosts } from '#ctrl-channel/terminator-costs.ts';
import {
  biasedCost,
  type Candidate,
  costedTerminators,
  relatedTerminators,
  STICKINESS_TOKEN_HEADER,
  selectTerminator,
  strategyNamed,
} from '#ctrl-channel/terminator-strategies.ts';
import { seededRandom } from '../support/seeded-random.ts';

const terminator = (id: string, cost = 0, precedence: Candidate['precedence'] = 'default'): Candidate => ({
  id,
  cost,
  precedence,
});

/** How often each terminator is chosen over many draws. */
function shares(draw: () => string, times = 10_000): Record<string, number> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < times; i++) {
    const id = draw();
    counts[id] = (counts[id] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).map(([id, count]) => [id, count / times]));
}

describe('route costs', () => {
  it('biases a cost into its precedence band: any required cheaper than any default, any default than any failed', () => {
    expect(biasedCost('required', 65_535 + 65_535)).toBeLessThan(biasedCost('default', 0));
    expect(biasedCost('default', 0xffff_ffff)).toBeLessThan(biasedCost('failed', 0));
    expect(biasedCost('default', 5)).toBe(1_073_741_823 + 5);
  });

  it('sorts by precedence, then static plus dynamic cost; the leading run of one precedence is the related ones', () => {
    const sorted = costedTerminators(
      [terminator('failed', 0, 'failed'), terminator('b', 10), terminator('a', 30), terminator('req', 500, 'required')],
      (t) => (t.id === 'b' ? 25 : 0),
      seededRandom(1),
    );

    expect(sorted.map((costed) => costed.terminator.id)).toEqual(['req', 'a', 'b', 'failed']);
    expect(relatedTerminators(sorted.slice(1)).map((costed) => costed.terminator.id)).toEqual(['a', 'b']);
  });
});

describe('the strategies', () => {
  const sortedOf = (candidates: Candidate[], random = seededRandom(7)) =>
    costedTerminators(candidates, () => 0, random);

  it('smartrouting takes the cheapest, and spreads equals at random', () => {
    const random = seededRandom(3);
    const pick = (candidates: Candidate[]) =>
      selectTerminator('smartrouting', sortedOf(candidates, random), {}, random).terminator.id;

    expect(pick([terminator('a', 20), terminator('b', 10)])).toBe('b');
    const equal = shares(() => pick([terminator('a', 10), terminator('b', 10)]), 2_000);
    expect(equal.a).toBeGreaterThan(0.4);
    expect(equal.b).toBeGreaterThan(0.4);
  });

  it('weighted chooses in inverse proportion to cost within the leading precedence', () => {
    const random = seededRandom(11);
    const sorted = sortedOf([terminator('cheap', 100), terminator('dear', 300), terminator('gone', 0, 'failed')]);

    const chosen = shares(() => selectTerminator('weighted', sorted, {}, random).terminator.id);

    // Weights 1 − 100/400 and 1 − 300/400, normalised: 75 % and 25 %.
    expect(chosen.cheap).toBeCloseTo(0.75, 1);
    expect(chosen.dear).toBeCloseTo(0.25, 1);
    expect(chosen.gone).toBeUndefined();
  });

  it('random is uniform within the leading precedence, whatever the costs', () => {
    const random = seededRandom(5);
    const sorted = sortedOf([
      terminator('a', 1),
      terminator('b', 500),
      terminator('c', 60_000),
      terminator('f', 0, 'failed'),
    ]);

    const chosen = shares(() => selectTerminator('random', sorted, {}, random).terminator.id);

    for (const id of ['a', 'b', 'c']) expect(chosen[id]).toBeCloseTo(1 / 3, 1);
    expect(chosen.f).toBeUndefined();
  });

  it('sticky keeps the terminator its token names while it leads, and hands the token of the one chosen', () => {
    const sorted = sortedOf([terminator('a', 10), terminator('b', 20), terminator('f', 0, 'failed')]);
    const pick = (token?: string) =>
      selectTerminator('sticky', sorted, token ? { stickinessToken: token } : {}, Math.random);

    expect(pick('b').terminator.id).toBe('b');
    expect(pick('f').terminator.id).toBe('a');
    expect(pick().terminator.id).toBe('a');
    expect(pick('b').peerData.get(STICKINESS_TOKEN_HEADER)?.toString()).toBe('b');
  });

  it('falls back to the default for a name it does not know', () => {
    expect(strategyNamed('ha')).toEqual({ strategy: 'smartrouting', known: false });
    expect(strategyNamed('weighted')).toEqual({ strategy: 'weighted', known: true });
  });
});

describe("the strategies' dynamic costs", () => {
  it('counts 2 a circuit and 20 a failure; a success takes 2 off the failure cost; a removed circuit counts no more', () => {
    const costs = createTerminatorCosts(() => new Date(0));

    costs.dialFailed('t');
    costs.dialFailed('t');
    costs.dialSucceeded('t', 'c1');
    costs.dialSucceeded('t', 'c2');

    expect(costs.dynamicCost('t')).toBe(40 - 4 + 2 * 2);
    costs.circuitRemoved('c1');
    costs.circuitRemoved('c1');
    costs.circuitRemoved('never-counted');
    expect(costs.dynamicCost('t')).toBe(36 + 2);
    expect(costs.dynamicCost('unknown')).toBe(0);
  });

  it('credits failures back every minute: at least 10, doubling every five minutes since the last failure', () => {
    let nowMs = 1_000_000;
    const costs = createTerminatorCosts(() => new Date(nowMs));
    for (let i = 0; i < 50; i++) costs.dialFailed('t');

    nowMs += CREDIT_PERIOD_MS - 1;
    expect(costs.dynamicCost('t')).toBe(1_000);
    nowMs += 1;
    expect(costs.dynamicCost('t')).toBe(990);
    // Minutes 2–19: 2^⌊minute/5⌋ is at most 8, so 10 each; minute 20: 2^4 = 16.
    nowMs += 19 * CREDIT_PERIOD_MS;
    expect(costs.dynamicCost('t')).toBe(990 - 10 * 18 - 16);
    nowMs += 60 * CREDIT_PERIOD_MS;
    expect(costs.dynamicCost('t')).toBe(0);
  });
});

describe("a service's maxIdleTime", () => {
  const circuit = { path: ['ingress', 'transit', 'egress'] };
  const service = { terminatorStrategy: 'smartrouting', maxIdleTimeMillis: 60_000 };

  it('removes a circuit its ends report idle past the limit, and any circuit of a gone service', () => {
    expect(idleTooLong(circuit, 'ingress', service, 60_000e6)).toMatch(/idle 60000 ms/);
    expect(idleTooLong(circuit, 'egress', service, 61_000e6)).toBeDefined();
    expect(idleTooLong(circuit, 'transit', undefined, undefined)).toBe('its service is gone');
  });

  it('keeps one below the limit, without a reported time, without a limit, or reported by a transit router', () => {
    expect(idleTooLong(circuit, 'ingress', service, 59_999e6)).toBeUndefined();
    expect(idleTooLong(circuit, 'ingress', service, undefined)).toBeUndefined();
    expect(idleTooLong(circuit, 'ingress', { ...service, maxIdleTimeMillis: 0 }, 1e15)).toBeUndefined();
    expect(idleTooLong(circuit, 'transit', service, 1e15)).toBeUndefined();
  });
});
