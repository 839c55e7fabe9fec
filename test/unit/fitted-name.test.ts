import { describe, expect, it } from 'vitest';
import { fittedName, MAX_NAME_LENGTH } from '#functions/pki/fitted-name.ts';

/** A name of `length` UTF-16 units: `unit` repeated, `unit` being one character of one or two units. */
const nameOf = (unit: string, length: number) => unit.repeat(length / unit.length);

describe('an enrolling identity’s name fitted to the name rule', () => {
  it('keeps a name that fits, trimmed, with its suffix', () => {
    expect(fittedName('  device  ', '')).toBe('device');
    expect(fittedName('device', '000001')).toBe('device000001');
    expect(fittedName('d'.repeat(MAX_NAME_LENGTH), '')).toBe('d'.repeat(MAX_NAME_LENGTH));
  });

  // Claims and common names come from outside: a cut must cost the characters kept, whatever the length sent.
  for (const length of [16_000, 200_000]) {
    it(`cuts a ${length.toLocaleString('en')}-character name to the rule, the suffix kept whole`, () => {
      expect(fittedName(nameOf('n', length), '')).toBe('n'.repeat(MAX_NAME_LENGTH));
      expect(fittedName(nameOf('n', length), '000001000002')).toBe(`${'n'.repeat(243)}000001000002`);
    });

    it(`cuts a ${length.toLocaleString('en')}-unit name of surrogate pairs between characters, never inside one`, () => {
      // 255 units hold 127 pairs: the 128th would be split.
      expect(fittedName(nameOf('😀', length), '')).toBe('😀'.repeat(127));
      expect(fittedName(`x${nameOf('😀', length)}`, '')).toBe(`x${'😀'.repeat(127)}`);
      expect(fittedName(nameOf('😀', length), '000001')).toBe(`${'😀'.repeat(124)}000001`);
    });
  }

  it('drops the spaces a cut leaves at the end', () => {
    expect(fittedName(`${'a'.repeat(250)}${' '.repeat(20)}b`, '')).toBe('a'.repeat(250));
    expect(fittedName(`${'a'.repeat(250)}${' '.repeat(20)}b`, '000001')).toBe(`${'a'.repeat(249)}000001`);
  });
});
