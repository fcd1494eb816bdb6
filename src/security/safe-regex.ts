/**
 * Regular expressions for policy `pattern` constraints that cannot backtrack catastrophically (issue 3,
 * "Policies as data"). A small subset of JavaScript regex syntax is compiled to a Thompson NFA and run
 * by simulating all states at once, so matching is linear in the input (O(input * states)) whatever the
 * pattern and input: `(a+)+$` on `aaaa…!` is as fast as `a`. Features that need backtracking
 * (backreferences, lookaround) are rejected when the policy loads.
 *
 * Supported: literals, `.`, classes `[a-z]` / `[^…]`, escapes `\d \D \w \W \s \S \t \n \r \f \v \0
 * \xHH \uHHHH \u{…}` and escaped punctuation, groups `(…)` / `(?:…)`, alternation `|`, quantifiers
 * `* + ? {n} {n,} {n,m}` (a trailing lazy `?` is accepted and ignored), `^` at the very start and `$` at
 * the very end. The whole value must match: the pattern is anchored at both ends.
 */
import { PolicyError } from '../errors.js';

/** Longest pattern source accepted. */
export const MAX_REGEX_SOURCE_LENGTH = 200;
/** Largest `{n,m}` bound accepted. */
export const MAX_REGEX_REPEAT = 100;
/** Most NFA states a pattern may compile to (bounds the per-character cost). */
export const MAX_REGEX_STATES = 1000;
/** Longest input tested; a longer value fails the constraint as an error (fail closed). */
export const MAX_REGEX_INPUT_LENGTH = 10_000;

/** A compiled, linear-time regular expression. */
export interface SafeRegex {
  readonly source: string;
  /** True when the whole of `input` matches. Linear time. */
  test(input: string): boolean;
}

type CharTest = (cp: number) => boolean;
type Node =
  | { t: 'char'; test: CharTest }
  | { t: 'seq'; items: Node[] }
  | { t: 'alt'; items: Node[] }
  | { t: 'rep'; node: Node; min: number; max: number }; // max = Infinity for unbounded

const isDigit: CharTest = (c) => c >= 48 && c <= 57;
const isWord: CharTest = (c) => isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const SPACES = new Set([9, 10, 11, 12, 13, 32, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff]);
const isSpace: CharTest = (c) => SPACES.has(c) || (c >= 0x2000 && c <= 0x200a);
const isLineEnd: CharTest = (c) => c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
const CLASS_ESCAPES: Readonly<Record<string, CharTest>> = {
  d: isDigit,
  D: (c) => !isDigit(c),
  w: isWord,
  W: (c) => !isWord(c),
  s: isSpace,
  S: (c) => !isSpace(c),
};
const CONTROL_ESCAPES: Readonly<Record<string, number>> = { t: 9, n: 10, r: 13, f: 12, v: 11, '0': 0 };

class Parser {
  private pos = 0;
  private readonly cps: number[];

  constructor(private readonly source: string) {
    this.cps = Array.from(source, (ch) => ch.codePointAt(0)!);
  }

  parse(): Node {
    if (this.peek() === 94 /* ^ */) this.pos++;
    const node = this.alternation();
    if (this.peek() === 36 /* $ */ && this.pos === this.cps.length - 1) this.pos++;
    if (this.pos < this.cps.length) {
      const ch = String.fromCodePoint(this.cps[this.pos]!);
      this.fail(ch === ')' ? 'unbalanced )' : `'${ch}' is not allowed here`);
    }
    return node;
  }

  private fail(message: string): never {
    throw new PolicyError(
      `Invalid regular expression /${this.source}/ at position ${this.pos}: ${message}. Only a safe subset is allowed (no backreferences or lookaround; '^' and '$' only at the ends).`,
      { pattern: this.source },
    );
  }

  private peek(offset = 0): number | undefined {
    return this.cps[this.pos + offset];
  }

  private alternation(): Node {
    const items = [this.sequence()];
    while (this.peek() === 124 /* | */) {
      this.pos++;
      items.push(this.sequence());
    }
    return items.length === 1 ? items[0]! : { t: 'alt', items };
  }

  private sequence(): Node {
    const items: Node[] = [];
    for (let c = this.peek(); c !== undefined && c !== 124 && c !== 41; c = this.peek()) {
      if (c === 36 && this.pos === this.cps.length - 1) break; // final `$`
      items.push(this.quantified(this.atom()));
    }
    return { t: 'seq', items };
  }

  private quantified(node: Node): Node {
    const c = this.peek();
    let min: number;
    let max: number;
    if (c === 42 /* * */) [min, max] = [0, Number.POSITIVE_INFINITY];
    else if (c === 43 /* + */) [min, max] = [1, Number.POSITIVE_INFINITY];
    else if (c === 63 /* ? */) [min, max] = [0, 1];
    else if (c === 123 /* { */) [min, max] = this.braces();
    else return node;
    if (c !== 123) this.pos++;
    if (this.peek() === 63) this.pos++; // lazy: same language
    const next = this.peek();
    if (next === 42 || next === 43 || next === 123 || (next === 63 && c !== 63)) {
      this.fail('a quantifier cannot follow another quantifier');
    }
    return { t: 'rep', node, min, max };
  }

  private braces(): [number, number] {
    const rest = String.fromCodePoint(...this.cps.slice(this.pos));
    const m = /^\{(\d{1,4})(,(\d{0,4}))?\}/.exec(rest);
    if (m === null) this.fail("'{' must start a quantifier {n}, {n,} or {n,m}; write \\{ for a literal");
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? Number.POSITIVE_INFINITY : Number(m[3]);
    if (min > MAX_REGEX_REPEAT || (max !== Number.POSITIVE_INFINITY && max > MAX_REGEX_REPEAT)) {
      this.fail(`repeat counts above ${MAX_REGEX_REPEAT} are not allowed`);
    }
    if (max < min) this.fail('{n,m} needs n <= m');
    this.pos += m[0].length;
    return [min, max];
  }

  private atom(): Node {
    const c = this.cps[this.pos++];
    switch (c) {
      case 40 /* ( */:
        {
          if (this.peek() === 63 /* ? */) {
            if (this.peek(1) !== 58 /* : */) this.fail('lookaround and named groups are not supported');
            this.pos += 2;
          }
          const inner = this.alternation();
          if (this.cps[this.pos++] !== 41) this.fail('missing )');
          return inner;
        }
      case 91 /* [ */:
        return { t: 'char', test: this.charClass() };
      case 46 /* . */:
        return { t: 'char', test: (x) => !isLineEnd(x) };
      case 92 /* \ */:
        return { t: 'char', test: this.escape(false) };
      case 42:
      case 43:
      case 63:
        return this.fail('nothing to repeat');
      case 123:
        return this.fail("'{' must follow something to repeat; write \\{ for a literal");
      case 94:
      case 36:
        return this.fail("'^' and '$' are only allowed at the very start and end");
      case 41:
      case 93:
      case 125:
        return this.fail(`unbalanced '${String.fromCodePoint(c)}'; escape it`);
      default: {
        const lit = c!;
        return { t: 'char', test: (x) => x === lit };
      }
    }
  }

  /** Parses after `\`. In a class, returns single code points as equality tests too. */
  private escape(inClass: boolean): CharTest {
    const c = this.cps[this.pos++];
    if (c === undefined) this.fail('trailing backslash');
    const ch = String.fromCodePoint(c);
    const cls = Object.hasOwn(CLASS_ESCAPES, ch) ? CLASS_ESCAPES[ch] : undefined;
    if (cls !== undefined) return cls;
    const cp = this.escapedCodePoint(ch, inClass);
    return (x) => x === cp;
  }

  private escapedCodePoint(ch: string, inClass: boolean): number {
    if (Object.hasOwn(CONTROL_ESCAPES, ch)) {
      if (ch === '0' && isDigit(this.peek() ?? -1)) this.fail('octal escapes are not supported');
      return CONTROL_ESCAPES[ch]!;
    }
    if (ch === 'x' || ch === 'u') {
      const rest = String.fromCodePoint(...this.cps.slice(this.pos, this.pos + 10));
      const m =
        ch === 'x' ? /^[0-9a-fA-F]{2}/.exec(rest) : /^(?:[0-9a-fA-F]{4}|\{[0-9a-fA-F]{1,6}\})/.exec(rest);
      if (m === null) this.fail(`malformed \\${ch} escape`);
      this.pos += m[0].length;
      const cp = Number.parseInt(m[0].replace(/[{}]/g, ''), 16);
      if (cp > 0x10ffff) this.fail('code point out of range');
      return cp;
    }
    if (ch === 'b' && inClass) return 8;
    if (/^[A-Za-z0-9]$/.test(ch)) {
      this.fail(`\\${ch} is not supported (backreferences, \\b, \\p and \\c are not allowed)`);
    }
    return ch.codePointAt(0)!;
  }

  private charClass(): CharTest {
    const negate = this.peek() === 94;
    if (negate) this.pos++;
    const tests: CharTest[] = [];
    const ranges: number[] = [];
    for (;;) {
      const c = this.cps[this.pos++];
      if (c === undefined) this.fail('missing ]');
      if (c === 93) break; // as in JavaScript, `[]` is an empty class
      let lo: number;
      if (c === 92) {
        const t = this.escapeInClass();
        if (typeof t !== 'number') {
          tests.push(t);
          continue;
        }
        lo = t;
      } else {
        lo = c;
      }
      if (this.peek() === 45 /* - */ && this.peek(1) !== 93 && this.peek(1) !== undefined) {
        this.pos++;
        const d = this.cps[this.pos++]!;
        const hi = d === 92 ? this.escapeInClass() : d;
        if (typeof hi !== 'number') this.fail('a class escape cannot end a range');
        if (hi < lo) this.fail('range out of order');
        ranges.push(lo, hi);
      } else {
        ranges.push(lo, lo);
      }
    }
    const inClass: CharTest = (x) => {
      for (let i = 0; i < ranges.length; i += 2) if (x >= ranges[i]! && x <= ranges[i + 1]!) return true;
      for (const t of tests) if (t(x)) return true;
      return false;
    };
    return negate ? (x) => !inClass(x) : inClass;
  }

  private escapeInClass(): CharTest | number {
    const c = this.cps[this.pos];
    const ch = c === undefined ? '' : String.fromCodePoint(c);
    if (Object.hasOwn(CLASS_ESCAPES, ch)) {
      this.pos++;
      return CLASS_ESCAPES[ch]!;
    }
    this.pos++;
    if (c === undefined) this.fail('trailing backslash');
    return this.escapedCodePoint(ch, true);
  }
}

// NFA: a char state consumes one code point matching `test` and moves to `out`; a split state moves
// (without consuming) to `out` and `alt`; state 0 is the final, accepting state.
interface State {
  test: CharTest | undefined;
  out: number;
  alt: number;
}

class Builder {
  readonly states: State[] = [{ test: undefined, out: -1, alt: -1 }];

  constructor(private readonly source: string) {}

  private add(state: State): number {
    if (this.states.length >= MAX_REGEX_STATES) {
      throw new PolicyError(
        `Regular expression /${this.source}/ is too large (more than ${MAX_REGEX_STATES} states once repeats are expanded).`,
        { pattern: this.source },
      );
    }
    this.states.push(state);
    return this.states.length - 1;
  }

  /** Builds `node` so that it continues to `next`; returns its entry state. */
  build(node: Node, next: number): number {
    switch (node.t) {
      case 'char':
        return this.add({ test: node.test, out: next, alt: -1 });
      case 'seq': {
        let entry = next;
        for (let i = node.items.length - 1; i >= 0; i--) entry = this.build(node.items[i]!, entry);
        return entry;
      }
      case 'alt': {
        let entry = this.build(node.items[node.items.length - 1]!, next);
        for (let i = node.items.length - 2; i >= 0; i--) {
          entry = this.add({ test: undefined, out: this.build(node.items[i]!, next), alt: entry });
        }
        return entry;
      }
      case 'rep': {
        let entry = next;
        if (node.max === Number.POSITIVE_INFINITY) {
          const loop = this.add({ test: undefined, out: -1, alt: next });
          this.states[loop]!.out = this.build(node.node, loop);
          entry = loop;
        } else {
          for (let i = node.min; i < node.max; i++) {
            entry = this.add({ test: undefined, out: this.build(node.node, entry), alt: next });
          }
        }
        for (let i = 0; i < node.min; i++) entry = this.build(node.node, entry);
        return entry;
      }
    }
  }
}

/** Compiles `source` into a {@link SafeRegex}. Throws `PolicyError` for unsupported or oversized patterns. */
export function compileSafeRegex(source: string): SafeRegex {
  if (typeof source !== 'string' || source.length === 0 || source.length > MAX_REGEX_SOURCE_LENGTH) {
    throw new PolicyError(
      `A regular expression must be 1 to ${MAX_REGEX_SOURCE_LENGTH} characters long.`,
      typeof source === 'string' ? { pattern: source.slice(0, 64) } : {},
    );
  }
  const builder = new Builder(source);
  const start = builder.build(new Parser(source).parse(), 0);
  const states = builder.states;
  const n = states.length;
  const seen = new Uint32Array(n);
  let gen = 0;

  const add = (list: number[], s: number): void => {
    const stack = [s];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (seen[id] === gen) continue;
      seen[id] = gen;
      const st = states[id]!;
      if (id === 0 || st.test !== undefined) list.push(id);
      else stack.push(st.alt, st.out);
    }
  };

  return Object.freeze({
    source,
    test(input: string): boolean {
      gen++;
      let current: number[] = [];
      add(current, start);
      for (let i = 0; i < input.length && current.length > 0; ) {
        const cp = input.codePointAt(i)!;
        i += cp > 0xffff ? 2 : 1;
        gen++;
        const next: number[] = [];
        for (const id of current) {
          const st = states[id]!;
          if (st.test?.(cp)) add(next, st.out);
        }
        current = next;
      }
      return current.includes(0);
    },
  });
}
