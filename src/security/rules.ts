/**
 * Turning a rule as given (code or policy) into an immutable, precompiled rule. Validation happens here,
 * once, when the rule is added: a malformed rule is refused with the field at fault, never stored.
 */
import type { DecidingRule } from '../errors.js';
import {
  type ConditionFunction,
  compileCondition,
  conditionSchemas,
  type Evaluator,
  type FlowCondition,
  type RuleCondition,
  wrapConditionFunction,
} from './conditions.js';
import { parseWith } from './parse.js';
import { type CompiledPattern, compilePattern, display, schemeActions, trimStop } from './pattern.js';
import type { Decision, RuleEffect } from './types.js';

/** Options of `grant`, `deny` and `ask`. */
export interface RuleOptions {
  /** Stable id (no ':'), for `revoke` and decisions. @default `rule-{n}` */
  id?: string | undefined;
  /** Shown in decisions and denials. */
  description?: string | undefined;
  /** A condition on the call: a declarative constraint (as in policy files) or a synchronous function. */
  when?: RuleCondition | ConditionFunction | undefined;
  /** When the rule stops applying: a `Date`, ms since the epoch, or an ISO string. @default never */
  expiresAt?: Date | number | string | undefined;
  /** Lifetime from now in ms; the alternative to `expiresAt`. @default none */
  ttlMs?: number | undefined;
  /** Allow rules only: how many calls `authorize` lets through this rule. @default unlimited */
  maxCalls?: number | undefined;
  /**
   * With `maxCalls`: the window the quota counts in, such as `'30s'`, `'1m'`, `'1h'` or `'1d'` (windows are
   * aligned to the clock, so every process sharing a store shares them). @default the quota never resets
   */
  per?: string | undefined;
}

/** A rule as callers see it: frozen, with nothing that could widen access if changed. */
export interface RuleInfo {
  readonly id: string;
  readonly effect: RuleEffect;
  readonly pattern: string;
  readonly actions: readonly string[];
  readonly description?: string | undefined;
  /** Ms since the epoch; the rule applies while `now < expiresAt`. */
  readonly expiresAt?: number | undefined;
  readonly maxCalls?: number | undefined;
  /** The quota's window, as written (`'1m'`). */
  readonly per?: string | undefined;
  /** What kind of condition the rule has. */
  readonly condition: 'none' | 'declarative' | 'function';
  /** The declarative condition, deep-frozen. */
  readonly when?: RuleCondition | undefined;
}

/** A rule ready for evaluation. Internal: only `info` ever leaves the security area. */
export interface CompiledRule {
  readonly seq: number;
  readonly id: string;
  readonly effect: RuleEffect;
  readonly pattern: CompiledPattern;
  readonly anyAction: boolean;
  /** The action when the rule names exactly one (compared with `===`, cheaper than a Set lookup). */
  readonly onlyAction: string | undefined;
  readonly actions: ReadonlySet<string>;
  readonly expiresAt: number | undefined;
  readonly maxCalls: number | undefined;
  /** The quota's window in ms (`per`); undefined when the quota never resets. */
  readonly windowMs: number | undefined;
  /** Calls let through so far in window `window` (allow rules with `maxCalls`). Mutable, with `window`. */
  used: number;
  window: number;
  readonly condition: Evaluator | undefined;
  /** The flow part of a declarative condition (issue 42): its decisions carry the flow they were made on. */
  readonly flow: FlowCondition | undefined;
  readonly info: RuleInfo;
  readonly deciding: DecidingRule;
  /** The decision when this rule decides normally. */
  readonly decision: Decision;
  /** The decision when this rule's condition failed (deny and ask rules: a deny). */
  readonly failedDecision: Decision;
  /** Ask rules: the decision once the approver allowed the call. */
  readonly approvedDecision: Decision;
}

/** A rule to compile. */
export interface RuleSpec {
  readonly effect: RuleEffect;
  readonly pattern: string;
  readonly actions: string | readonly string[];
  readonly options: RuleOptions;
}

/** Why a rule was refused: the field (as named in policy files) and the problem. */
export interface RuleProblem {
  readonly field: string;
  readonly message: string;
  readonly cause?: unknown;
}

/** A rule id: no ':' (so it can never be mistaken for a pattern by `revoke`), no spaces. */
export const RULE_ID_RE = /^[A-Za-z0-9_.@/-]{1,128}$/;
/** What a rule id may be, said the same way by the policy schema and by `grant`. */
export const RULE_ID_MESSAGE =
  "an id is 1-128 characters from A-Z a-z 0-9 _ . @ / - (no ':', so it never looks like a pattern)";

const OPTION_KEYS = new Set(['id', 'description', 'when', 'expiresAt', 'ttlMs', 'maxCalls', 'per']);
const ACTION_RE = /^(?:\*|[A-Za-z][A-Za-z0-9_.-]{0,63})$/;

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

function toMillis(value: Date | number | string): number {
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'number') return value;
  // Only full ISO 8601 date-times: `Date.parse` alone accepts too many odd forms.
  return /^\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d)$/.test(value)
    ? Date.parse(value)
    : Number.NaN;
}

function problemOf(field: string, err: unknown): RuleProblem {
  const message = err instanceof Error ? err.message : String(err);
  return { field, message, cause: err };
}

/**
 * Compiles a rule, or explains why it is refused. `now` places `ttlMs`; `id` is already unique. The one check of
 * a rule's meaning: `grant`/`deny`/`ask` call it, and the policy schema refines each rule with it.
 */
export function compileRule(
  spec: RuleSpec,
  seq: number,
  id: string,
  now: number,
): CompiledRule | RuleProblem {
  const { effect, options } = spec;
  // A misspelt option (`expiresAT`, `maxcalls`) would otherwise leave a permanent or unlimited rule.
  const unknown = Object.keys(options).find((k) => !OPTION_KEYS.has(k));
  if (unknown !== undefined) {
    return { field: unknown, message: `unknown option (known: ${[...OPTION_KEYS].join(', ')})` };
  }
  let pattern: CompiledPattern;
  try {
    pattern = compilePattern(spec.pattern);
  } catch (err) {
    return problemOf('resource', err);
  }
  const list =
    typeof spec.actions === 'string' ? [spec.actions] : Array.isArray(spec.actions) ? spec.actions : [];
  if (list.length === 0) return { field: 'actions', message: 'give at least one action' };
  const valid = schemeActions(pattern.scheme) ?? [];
  for (const a of list) {
    if (typeof a !== 'string' || !ACTION_RE.test(a)) {
      return { field: 'actions', message: `'${display(a)}' is not an action name` };
    }
    if (a !== '*' && !valid.includes(a)) {
      return {
        field: 'actions',
        message: `'${a}' is not an action of '${pattern.scheme}' resources, so the rule could never match (use ${[...valid, '*'].join(' or ')})`,
      };
    }
  }
  const actions = Object.freeze([...new Set(list)]);
  if (
    options.description !== undefined &&
    (typeof options.description !== 'string' || options.description.length > 1000)
  ) {
    return { field: 'description', message: 'a description is a string of at most 1000 characters' };
  }
  if (options.expiresAt !== undefined && options.ttlMs !== undefined) {
    return { field: 'expiresAt', message: 'give expiresAt or ttlMs, not both' };
  }
  let expiresAt: number | undefined;
  if (options.expiresAt !== undefined) {
    expiresAt = toMillis(options.expiresAt);
    if (!Number.isFinite(expiresAt)) {
      return {
        field: 'expiresAt',
        message: 'not a valid time (use a Date, ms since the epoch, or an ISO 8601 string)',
      };
    }
  } else if (options.ttlMs !== undefined) {
    if (typeof options.ttlMs !== 'number' || !(options.ttlMs > 0) || !Number.isFinite(options.ttlMs)) {
      return { field: 'ttlMs', message: 'ttlMs must be a positive number of milliseconds' };
    }
    expiresAt = now + options.ttlMs;
  }
  const maxCalls = options.maxCalls;
  if (maxCalls !== undefined) {
    if (effect !== 'allow')
      return { field: 'maxCalls', message: `maxCalls applies to allow rules only, not ${effect}` };
    if (!Number.isSafeInteger(maxCalls) || maxCalls < 1) {
      return { field: 'maxCalls', message: 'maxCalls must be a positive integer' };
    }
  }
  let windowMs: number | undefined;
  if (options.per !== undefined) {
    if (maxCalls === undefined)
      return { field: 'per', message: 'per needs maxCalls: it is the window of a quota' };
    windowMs = parseWindow(options.per);
    if (windowMs === undefined) {
      return {
        field: 'per',
        message: "per is a window such as '30s', '5m', '1h' or '1d' (at most 366 days)",
      };
    }
  }
  let condition: Evaluator | undefined;
  let kind: RuleInfo['condition'] = 'none';
  let when: RuleCondition | undefined;
  if (typeof options.when === 'function') {
    condition = wrapConditionFunction(options.when);
    kind = 'function';
  } else if (options.when !== undefined) {
    try {
      when = deepFreeze(parseWith(conditionSchemas().plainRuleCondition, options.when, 'condition', 'when'));
      condition = compileCondition(when);
    } catch (err) {
      return problemOf('when', err);
    }
    // Tool annotations are untrusted hints (issue 3, "The gate"): they may deny more, never allow more.
    if (when.annotations !== undefined && effect === 'allow') {
      return {
        field: 'when.annotations',
        message:
          'tool annotations are untrusted hints a server sets itself; use them on deny or ask rules only',
      };
    }
    kind = 'declarative';
  }
  const description = options.description;
  const info: RuleInfo = Object.freeze({
    id,
    effect,
    pattern: pattern.source,
    actions,
    ...(description !== undefined ? { description } : {}),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
    ...(maxCalls !== undefined ? { maxCalls } : {}),
    ...(options.per !== undefined ? { per: options.per } : {}),
    condition: kind,
    ...(when !== undefined ? { when } : {}),
  });
  const deciding: DecidingRule = Object.freeze({ id, pattern: pattern.source, effect, description });
  const named = `rule '${id}' (${display(pattern.source)})`;
  const why = description !== undefined ? `: ${display(trimStop(description))}` : '';
  const base = { ruleId: id, rule: deciding };
  const decision: Decision = Object.freeze(
    effect === 'allow'
      ? { allowed: true, effect, ...base, reason: `Allowed by ${named}.` }
      : effect === 'deny'
        ? { allowed: false, effect, ...base, reason: `Denied by ${named}${why}.` }
        : { allowed: false, effect, ...base, reason: `Needs approval: ${named} asks a human first${why}.` },
  );
  const failedDecision: Decision = Object.freeze({
    allowed: false,
    effect: 'deny',
    ...base,
    reason:
      when?.flow === undefined
        ? `Denied: the condition of ${named} failed (it threw, returned a non-boolean, or met a value of the wrong type), and a failed condition fails closed.`
        : `Denied: the condition of ${named} failed (a value of the wrong type, or an information flow it could not check: no flow state, no target labels, or a full provenance index), and a failed condition fails closed.`,
  });
  const approvedDecision: Decision = Object.freeze({
    allowed: true,
    effect: 'allow',
    ...base,
    reason: `Allowed: ${named} asked for approval and the approver allowed it.`,
  });
  return {
    seq,
    id,
    effect,
    pattern,
    anyAction: actions.includes('*'),
    onlyAction: actions.length === 1 ? actions[0] : undefined,
    actions: new Set(actions),
    expiresAt,
    maxCalls,
    windowMs,
    used: 0,
    window: 0,
    condition,
    flow: when?.flow,
    info,
    deciding,
    decision,
    failedDecision,
    approvedDecision,
  };
}

/** True when `value` is a {@link RuleProblem} rather than a compiled rule. */
export function isProblem(value: CompiledRule | RuleProblem): value is RuleProblem {
  return 'field' in value;
}

/** True when `id` can name a rule (no ':', so `revoke` never confuses it with a pattern). */
export function isValidRuleId(id: unknown): id is string {
  return typeof id === 'string' && RULE_ID_RE.test(id);
}

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `'30s'` -> 30 000; undefined for anything else, or outside 1 ms .. 366 days. */
export function parseWindow(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^([1-9][0-9]{0,8})(ms|s|m|h|d)$/.exec(text);
  if (m === null) return undefined;
  const ms = Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  return ms <= 366 * 86_400_000 ? ms : undefined;
}

/** Calls a quota rule let through in the window `now` falls in. */
export function quotaUsed(rule: CompiledRule, now: number): number {
  if (rule.windowMs === undefined) return rule.used;
  return Math.floor(now / rule.windowMs) === rule.window ? rule.used : 0;
}

/** Counts one call against a quota rule, starting a new window when `now` left the last one. */
export function chargeQuota(rule: CompiledRule, now: number): void {
  if (rule.windowMs !== undefined) {
    const window = Math.floor(now / rule.windowMs);
    if (window !== rule.window) {
      rule.window = window;
      rule.used = 0;
    }
  }
  rule.used += 1;
}
