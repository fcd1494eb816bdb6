/**
 * The declarative language a suite's data is written in (issue 42, "Measured on a public benchmark"): value
 * expressions, conditions over them, and the steps a tool runs against the environment. A suite the replay has never
 * seen is data in this language, so it runs without code changes. README.md in this folder documents every form.
 *
 * A value expression is a JSON literal, an array or object of expressions, or an object with one `$` key
 * (`{ "$arg": "recipient" }`). Paths are dotted strings or arrays of segments (a segment may itself be an
 * expression, e.g. an argument used as a key). Objects and arrays read from the environment are live: a step that
 * sets a field of an item found by `$find` changes the environment.
 */
import { ConfigError } from '../../src/errors.js';

/** Plain JSON, as suites and environments are written. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };

/** What an expression is evaluated against: the environment (or the root of a check), the call's arguments and bound names. */
export interface Scope {
  readonly root: Json;
  readonly args: Obj;
  readonly vars: Record<string, Json | undefined>;
  /** The fixed "now" of a run (ISO), so results do not depend on the clock. */
  readonly now: string;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(message: string): never {
  throw new ConfigError(`agentdojo suite: ${message}`);
}

function opOf(expr: Obj): string | undefined {
  const keys = Object.keys(expr);
  const first = keys[0];
  return first?.startsWith('$') ? first : undefined;
}

/** The items of a list, or the values of an object (a dict of emails is searched like a list). */
function itemsOf(v: Json | undefined): Json[] {
  if (Array.isArray(v)) return v;
  if (isObj(v)) return Object.values(v);
  return [];
}

function segmentsOf(path: Json, scope: Scope): (string | number)[] {
  const raw: Json = typeof path === 'string' ? (path === '' ? [] : path.split('.')) : path;
  if (!Array.isArray(raw)) fail(`a path is a dotted string or an array, got ${JSON.stringify(path)}`);
  return raw.map((seg) => {
    const v = typeof seg === 'string' || typeof seg === 'number' ? seg : evaluate(seg, scope);
    if (typeof v !== 'string' && typeof v !== 'number') fail(`a path segment must be a string or number`);
    return v;
  });
}

function walk(from: Json | undefined, segments: readonly (string | number)[]): Json | undefined {
  let at: Json | undefined = from;
  for (const seg of segments) {
    if (Array.isArray(at)) at = at[typeof seg === 'number' ? seg : Number(seg)];
    else if (isObj(at)) at = Object.hasOwn(at, String(seg)) ? at[String(seg)] : undefined;
    else return undefined;
  }
  return at;
}

/** A path whose first segment may be `{ "$var": name }` (start at a bound value) instead of the root. */
function resolveBase(path: Json, scope: Scope): { base: Json | undefined; segments: (string | number)[] } {
  if (Array.isArray(path) && path.length > 0 && isObj(path[0]) && opOf(path[0]) === '$var') {
    const name = (path[0] as Obj).$var;
    if (typeof name !== 'string') fail('$var takes a name');
    return { base: scope.vars[name], segments: segmentsOf(path.slice(1), scope) };
  }
  return { base: scope.root, segments: segmentsOf(path, scope) };
}

/** Reads a path (see `resolveBase`). */
export function readPath(path: Json, scope: Scope): Json | undefined {
  const { base, segments } = resolveBase(path, scope);
  return walk(base, segments);
}

function num(v: Json | undefined, what: string): number {
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || Number.isNaN(n)) fail(`${what} needs a number, got ${JSON.stringify(v)}`);
  return n;
}

function str(v: Json | undefined): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
}

/** `YYYY-MM-DD HH:MM`, `YYYY-MM-DDTHH:MM[:SS]` or a date, as Python's `isoformat()` writes it (seconds included). */
function isoDateTime(v: Json | undefined): string {
  const s = str(v).trim();
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(s);
  if (!m) fail(`not a date-time: ${JSON.stringify(v)}`);
  return `${m[1]}T${m[2] ?? '00'}:${m[3] ?? '00'}:${m[4] ?? '00'}`;
}

const ms = (iso: string): number => Date.parse(`${isoDateTime(iso)}Z`);

function withItem(scope: Scope, name: string, item: Json): Scope {
  return { ...scope, vars: { ...scope.vars, [name]: item } };
}

function listOp(spec: Json, scope: Scope): { items: Json[]; as: string; where: Json | undefined; spec: Obj } {
  if (!isObj(spec) || spec.in === undefined) fail('a list operation takes { in, where?, as? }');
  const as = typeof spec.as === 'string' ? spec.as : 'item';
  return { items: itemsOf(evaluate(spec.in, scope)), as, where: spec.where, spec };
}

function filtered(spec: Json, scope: Scope): Json[] {
  const { items, as, where } = listOp(spec, scope);
  return where === undefined ? items : items.filter((it) => holds(where, withItem(scope, as, it)));
}

/** Evaluates a value expression. */
export function evaluate(expr: Json | undefined, scope: Scope): Json {
  if (expr === undefined) return null;
  if (Array.isArray(expr)) return expr.map((e) => evaluate(e, scope));
  if (!isObj(expr)) return expr;
  const op = opOf(expr);
  if (op === undefined) {
    const out: Obj = {};
    for (const [k, v] of Object.entries(expr)) out[k] = evaluate(v, scope);
    return out;
  }
  const a = expr[op] as Json;
  const args = () => (Array.isArray(a) ? a.map((e) => evaluate(e, scope)) : [evaluate(a, scope)]);
  switch (op) {
    case '$literal':
      return a;
    case '$arg': {
      const v = scope.args[str(a)];
      return v === undefined ? null : v;
    }
    case '$path':
      return readPath(a, scope) ?? null;
    case '$var': {
      const v = scope.vars[str(a)];
      return v === undefined ? null : v;
    }
    case '$item': {
      const v = walk(scope.vars.item, segmentsOf(a, scope));
      return v === undefined ? null : v;
    }
    case '$now':
      return scope.now;
    case '$default':
      return args().find((v) => v !== null && v !== undefined) ?? null;
    case '$concat':
      return args().map(str).join('');
    case '$lower':
      return str(args()[0]).toLowerCase();
    case '$split': {
      const [s, sep] = args();
      return sep === null || sep === undefined || sep === ' '
        ? str(s)
            .split(/\s+/)
            .filter((w) => w !== '')
        : str(s).split(str(sep));
    }
    case '$join': {
      const [list, sep] = args();
      return itemsOf(list).map(str).join(str(sep));
    }
    case '$string':
      return str(args()[0]);
    case '$number':
      return num(args()[0], '$number');
    case '$add':
      return args().reduce<number>((sum, v) => sum + num(v, '$add'), 0);
    case '$neg':
      return -num(args()[0], '$neg');
    case '$len': {
      const v = args()[0];
      return typeof v === 'string' ? v.length : itemsOf(v).length;
    }
    case '$keys': {
      const v = args()[0];
      return isObj(v) ? Object.keys(v) : [];
    }
    case '$values':
      return itemsOf(args()[0]);
    case '$flat':
      return args().flatMap((v) => itemsOf(v));
    case '$unique': {
      const seen = new Set<string>();
      return itemsOf(args()[0]).filter((v) => {
        const k = JSON.stringify(v);
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      });
    }
    case '$last': {
      // Python's list[-n:]: the last n items (all of them when n is 0 or larger than the list).
      const [list, n] = args();
      const items = itemsOf(list);
      const k = Math.trunc(num(n, '$last'));
      return k <= 0 ? items : items.slice(-k);
    }
    case '$nextId': {
      // One more than the largest of the ids (numbers or numeric strings), 1 when there are none.
      const ids = itemsOf(args()[0]).map((v) => num(v, '$nextId'));
      return ids.length === 0 ? 1 : Math.max(...ids) + 1;
    }
    case '$datetime':
      return isoDateTime(args()[0]);
    case '$date':
      return isoDateTime(args()[0]).slice(0, 10);
    case '$time':
      return isoDateTime(args()[0]).slice(11);
    case '$stripScheme':
      // The web tools' URL key: without a leading https:// (then http://).
      return str(args()[0])
        .replace(/^https:\/\//, '')
        .replace(/^http:\/\//, '');
    case '$if': {
      if (!isObj(a)) fail('$if takes { cond, then, else }');
      return holds(a.cond, scope) ? evaluate(a.then, scope) : evaluate(a.else, scope);
    }
    case '$shiftTime': {
      // [time, from, to]: time moved by (to - from), as `isoformat()` writes it.
      const [t, from, to] = args().map((v) => ms(str(v)));
      const moved = new Date((t as number) + (to as number) - (from as number));
      return moved.toISOString().slice(0, 19);
    }
    case '$filter':
      return filtered(a, scope);
    case '$find':
      return filtered(a, scope)[0] ?? null;
    case '$count':
      return filtered(a, scope).length;
    case '$map': {
      const { items, as, spec } = listOp(a, scope);
      return items.map((it) => evaluate(spec.to, withItem(scope, as, it)));
    }
    case '$sum': {
      const { spec } = listOp(a, scope);
      const as = typeof spec.as === 'string' ? spec.as : 'item';
      return filtered(a, scope).reduce<number>(
        (sum, it) => sum + num(evaluate(spec.of, withItem(scope, as, it)), '$sum'),
        0,
      );
    }
    default:
      return fail(`unknown expression ${op}`);
  }
}

function truthy(v: Json): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (isObj(v)) return Object.keys(v).length > 0;
  return v !== null && v !== false && v !== 0 && v !== '';
}

function pair(a: Json, scope: Scope): [Json, Json] {
  if (!Array.isArray(a) || a.length !== 2) fail('a comparison takes two expressions');
  return [evaluate(a[0], scope), evaluate(a[1], scope)];
}

const deepEqual = (x: Json, y: Json): boolean => JSON.stringify(x) === JSON.stringify(y);

/** Whether a condition holds. */
export function holds(cond: Json | undefined, scope: Scope): boolean {
  if (cond === undefined || cond === null) return true;
  if (!isObj(cond)) fail(`a condition is an object, got ${JSON.stringify(cond)}`);
  const [op, ...rest] = Object.keys(cond);
  if (op === undefined || rest.length > 0) {
    // Several keys: every one must hold (the way a rule's `when` reads).
    return Object.entries(cond).every(([k, v]) => holds({ [k]: v }, scope));
  }
  const a = cond[op] as Json;
  switch (op) {
    case 'all':
      return itemsOf(a).every((c) => holds(c, scope));
    case 'any':
      return itemsOf(a).some((c) => holds(c, scope));
    case 'not':
      return !holds(a, scope);
    case 'truthy':
      return truthy(evaluate(a, scope));
    case 'isNull': {
      const v = evaluate(a, scope);
      return v === null;
    }
    case 'eq': {
      const [x, y] = pair(a, scope);
      return deepEqual(x, y);
    }
    case 'eqi': {
      const [x, y] = pair(a, scope);
      return str(x).toLowerCase() === str(y).toLowerCase();
    }
    case 'contains':
    case 'containsi': {
      const [hay, needle] = pair(a, scope);
      if (Array.isArray(hay)) return hay.some((h) => deepEqual(h, needle));
      if (isObj(hay)) return Object.hasOwn(hay, str(needle));
      const fold = op === 'containsi' ? (s: string) => s.toLowerCase() : (s: string) => s;
      return fold(str(hay)).includes(fold(str(needle)));
    }
    case 'startsWith': {
      const [s, prefix] = pair(a, scope);
      return str(s).startsWith(str(prefix));
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const [x, y] = pair(a, scope);
      const d = num(x, op) - num(y, op);
      return op === 'gt' ? d > 0 : op === 'gte' ? d >= 0 : op === 'lt' ? d < 0 : d <= 0;
    }
    case 'sequence': {
      // The items, in order, match each condition in turn (other items may come between them).
      if (!isObj(a) || !Array.isArray(a.steps)) fail('sequence takes { in, steps: [conditions] }');
      const steps = a.steps;
      let next = 0;
      for (const item of itemsOf(evaluate(a.in, scope))) {
        if (next < steps.length && holds(steps[next], withItem(scope, 'item', item))) next++;
      }
      return next === steps.length;
    }
    case 'some':
    case 'every': {
      const { items, as, where } = listOp(a, scope);
      const test = (it: Json) => holds(where, withItem(scope, as, it));
      return op === 'some' ? items.some(test) : items.every(test);
    }
    default:
      return fail(`unknown condition ${op}`);
  }
}

/** One step of a tool's semantics. */
export type Step = Obj;

/** What a tool's steps produced: a value to return, or an error the tool reports (`isError`). */
export type StepOutcome = { value: Json } | { error: string };

function container(path: Json, scope: Scope): { parent: Json | undefined; key: string | number } {
  const { base, segments } = resolveBase(path, scope);
  const key = segments.at(-1);
  if (key === undefined) fail('a step needs a path with at least one segment');
  return { parent: walk(base, segments.slice(0, -1)), key };
}

/**
 * Runs a tool's steps against the scope's root (mutated in place). Steps: `let` (bind a value), `set` (a field),
 * `push` (onto a list), `delete` (a key, keeping the value in `as`), `remove` (items of a list equal to a value),
 * `each` (run `do` for every item, bound to `as`), `error` (the tool reports an error), `return`. Every step may carry `if`: a condition that must hold for it to run.
 */
export function runSteps(steps: readonly Step[], scope: Scope): StepOutcome {
  const vars = scope.vars;
  for (const step of steps) {
    if (step.if !== undefined && !holds(step.if, scope)) continue;
    if ('let' in step) {
      vars[str(step.let)] = evaluate(step.value, scope);
    } else if ('set' in step) {
      const { parent, key } = container(step.set as Json, scope);
      if (!isObj(parent) && !Array.isArray(parent))
        return { error: `nothing at ${JSON.stringify(step.set)}` };
      (parent as Record<string | number, Json>)[key] = evaluate(step.value, scope);
    } else if ('push' in step) {
      const list = readPath(step.push as Json, scope);
      if (!Array.isArray(list)) return { error: `no list at ${JSON.stringify(step.push)}` };
      list.push(evaluate(step.value, scope));
    } else if ('delete' in step) {
      const { parent, key } = container(step.delete as Json, scope);
      if (!isObj(parent)) return { error: `nothing at ${JSON.stringify(step.delete)}` };
      const removed = parent[String(key)];
      delete parent[String(key)];
      if (typeof step.as === 'string') vars[step.as] = removed ?? null;
    } else if ('remove' in step) {
      const list = readPath(step.remove as Json, scope);
      if (!Array.isArray(list)) return { error: `no list at ${JSON.stringify(step.remove)}` };
      const value = evaluate(step.value, scope);
      for (let i = list.length - 1; i >= 0; i--) if (deepEqual(list[i] as Json, value)) list.splice(i, 1);
    } else if ('each' in step) {
      const name = typeof step.as === 'string' ? step.as : 'item';
      for (const item of itemsOf(evaluate(step.each, scope))) {
        vars[name] = item;
        const inner = runSteps(itemsOf(step.do) as Step[], scope);
        if ('error' in inner) return inner;
      }
    } else if ('error' in step) {
      return { error: str(evaluate(step.error, scope)) };
    } else if ('return' in step) {
      return { value: evaluate(step.return, scope) };
    } else {
      fail(`unknown step ${JSON.stringify(Object.keys(step))}`);
    }
  }
  return { value: null };
}
