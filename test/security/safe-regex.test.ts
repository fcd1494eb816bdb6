import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileSafeRegex } from '../../src/security/safe-regex.js';

describe('safe regular expressions', () => {
  it('matches the whole value, as if anchored at both ends', () => {
    const re = compileSafeRegex('[a-z]+');
    expect(re.test('abc')).toBe(true);
    expect(re.test('abc1')).toBe(false);
    expect(re.test('')).toBe(false);
  });

  it('runs classic ReDoS patterns on hostile input in linear time (no backtracking)', () => {
    // Each of these takes exponential time in a backtracking engine on this input.
    const hostile = `${'a'.repeat(9_999)}!`;
    for (const source of ['(a+)+$', '(a|aa)+$', '(a|a?)+$', '(.*a){12}$', '^(a*)*b$', '(\\w+\\s?)*$']) {
      expect(compileSafeRegex(source).test(hostile)).toBe(false);
    }
  });

  it.each([
    ['(a)\\1', /backreferences/],
    ['(?=a)', /lookaround/],
    ['(?<name>a)', /lookaround and named groups/],
    ['a**', /quantifier cannot follow/],
    ['*a', /nothing to repeat/],
    ['a{1000}', /above 100/],
    ['a{3,2}', /n <= m/],
    ['a$b', /only allowed at the very start and end/],
    ['[z-a]', /out of order/],
    ['(a', /missing \)/],
    ['a)', /unbalanced \)/],
    ['\\p{L}', /not supported/],
    ['a{', /quantifier/],
    ['x'.repeat(201), /1 to 200/],
    ['(a{100}){100}', /too large/],
  ])('rejects %j when the policy loads', (source, message) => {
    expect(() => compileSafeRegex(source)).toThrow(message);
  });

  // A small grammar whose JavaScript meaning (with the `u` flag, anchored) is the same as ours.
  const atom = fc.constantFrom(
    'a',
    'b',
    '.',
    '[ab]',
    '[^a]',
    '\\d',
    '\\w',
    '\\s',
    '[a-c]',
    '\\.',
    '(?:ab)',
    '😀',
  );
  const quantified = fc
    .tuple(atom, fc.constantFrom('', '*', '+', '?', '{2}', '{1,3}', '{0,}', '*?'))
    .map(([a, q]) => a + q);
  const sequence = fc.array(quantified, { minLength: 1, maxLength: 4 }).map((xs) => xs.join(''));
  const regex = fc.oneof(
    sequence,
    fc.tuple(sequence, sequence).map(([x, y]) => `${x}|${y}`),
    fc.tuple(sequence, fc.constantFrom('*', '+', '?')).map(([x, q]) => `(${x})${q}`),
  );
  const input = fc.string({ unit: fc.constantFrom('a', 'b', 'c', '1', ' ', '.', '\n', '😀'), maxLength: 8 });

  it('agrees with JavaScript RegExp on the supported subset (property, 3 000 cases)', () => {
    fc.assert(
      fc.property(regex, input, (source, value) => {
        const native = new RegExp(`^(?:${source})$`, 'u');
        expect(compileSafeRegex(source).test(value)).toBe(native.test(value));
      }),
      { numRuns: 3_000 },
    );
  });
});
