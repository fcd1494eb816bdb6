/**
 * Rule conditions (issue 3, "Policies as data"): declarative constraints a policy file can hold, and
 * programmatic `when` functions for sets built in code. Evaluation is three-valued: a condition holds,
 * does not hold, or fails (it threw, returned a non-boolean, or met a value of the wrong type). A
 * failed condition fails closed: an allow does not apply, a deny does.
 */

import { posix } from 'node:path';
import { z } from 'zod';
import { once } from '../lazy.js';
import { type ConditionResult, ERRORED, FAILS_TO_HOLD, HOLDS } from './condition-result.js';
import { compileFlow, describeFlow, explainFlow } from './flow-conditions.js';
import { flowLabelSchemas, MAX_LABELS } from './flow-labels.js';
import { plainData } from './parse.js';
import { trimStop } from './pattern.js';
import { compileSafeRegex, MAX_REGEX_INPUT_LENGTH, MAX_REGEX_SOURCE_LENGTH } from './safe-regex.js';
import type { CheckContext, ToolHints } from './types.js';

/** What a `when` function sees: the check's context plus the resource and action. */
export interface ConditionInput extends CheckContext {
  readonly resource: string;
  readonly action: string;
  /** The time of the check (the context's `now`, or the set's clock). */
  readonly now: number;
}

/** A programmatic condition. Must be synchronous and return a boolean; anything else fails closed. */
export type ConditionFunction = (input: ConditionInput) => boolean;

export { type ConditionResult, ERRORED, FAILS_TO_HOLD, HOLDS } from './condition-result.js';

/** A compiled condition. */
export type Evaluator = (input: ConditionInput) => ConditionResult;

/** The condition schemas, built on first use (importing the security area builds no schema: issue 15). */
export const conditionSchemas = once(buildConditionSchemas);

function buildConditionSchemas() {
  const Scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
  // A regular expression is checked where it is written: an unsafe one names its own field.
  const Regex = z
    .string()
    .min(1)
    .max(MAX_REGEX_SOURCE_LENGTH)
    .superRefine((source, ctx) => {
      try {
        compileSafeRegex(source);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: trimStop(err instanceof Error ? err.message : String(err)) });
      }
    });

  // Field descriptions live on the schemas (`.describe()`): the API reference, the project file's reference page
  // and its JSON Schema are generated from them.

  /** The keys of an argument constraint that test one value. */
  const ValueConstraintShape = {
    equals: Scalar.optional().describe('The value equals this JSON scalar (same type).'),
    oneOf: z.array(Scalar).min(1).max(1000).optional().describe('The value is one of these JSON scalars.'),
    noneOf: z
      .array(Scalar)
      .min(1)
      .max(1000)
      .optional()
      .describe(
        'The value is none of these JSON scalars (a value of a type none of them has fails the condition, as for oneOf).',
      ),
    startsWith: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe(
        'String prefix; a prefix starting with / compares normalized POSIX paths, segment by segment.',
      ),
    pattern: Regex.optional().describe('A safe regular expression the whole string must match.'),
    maxLength: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('Most characters (UTF-16 units) a string, or items an array, may have.'),
    min: z.number().finite().optional().describe('Smallest number allowed (inclusive).'),
    max: z.number().finite().optional().describe('Largest number allowed (inclusive).'),
  };

  const needsAKey = { message: 'an argument constraint needs at least one key' };

  /**
   * Constraints on one argument; every key given must hold. `each` applies to every item of an array (an empty
   * array holds): `models: { each: { oneOf: ['small', 'medium'] } }`.
   */
  const argConstraint = z
    .strictObject({
      ...ValueConstraintShape,
      each: z
        .strictObject(ValueConstraintShape)
        .refine((c) => Object.keys(c).length > 0, needsAKey)
        .optional()
        .describe(
          'Constraints every item of an array must meet (an empty array meets them): the keys above, one level deep.',
        ),
    })
    .refine((c) => Object.keys(c).length > 0, needsAKey)
    .describe('Constraints on one argument; every key given must hold.');

  /** Constraints on the agent name. */
  const agentConstraint = z
    .strictObject({
      equals: z.string().optional().describe('The agent name equals this.'),
      oneOf: z.array(z.string()).min(1).max(1000).optional().describe('The agent name is one of these.'),
      startsWith: z.string().min(1).optional().describe('The agent name starts with this.'),
      pattern: Regex.optional().describe('A safe regular expression the whole agent name must match.'),
    })
    .refine((c) => Object.keys(c).length > 0, { message: 'an agent constraint needs at least one key' })
    .describe('Constraints on the agent name (equals, oneOf, startsWith, pattern).');

  /** Tool annotation values to match (untrusted: accepted on deny and ask rules only). */
  const annotationConstraint = z
    .strictObject({
      readOnlyHint: z.boolean().optional().describe('The tool says it does not modify anything.'),
      destructiveHint: z.boolean().optional().describe('The tool says it may destroy data (default true).'),
      idempotentHint: z.boolean().optional().describe('The tool says repeated calls have no further effect.'),
      openWorldHint: z
        .boolean()
        .optional()
        .describe('The tool says it reaches outside systems (default true).'),
    })
    .refine((c) => Object.keys(c).length > 0, { message: 'an annotations constraint needs at least one key' })
    .describe('Tool annotation values to match. Untrusted server hints: deny and ask rules only.');

  /** What the session has seen and what the target is (issue 42): every key given must hold. */
  const labels = (what: string) => z.array(flowLabelSchemas().label).min(1).max(MAX_LABELS).describe(what);
  const flowCondition = z
    .strictObject({
      target: labels(
        'The called or read target has all these labels (content or sink: the policy, the project file, annotation defaults).',
      ).optional(),
      seen: labels('All these labels have entered the session.').optional(),
      seenAny: labels('At least one of these labels has entered the session.').optional(),
      carries: labels(
        'Some string argument carries a recorded fragment of content with any of these labels (argument provenance).',
      ).optional(),
    })
    .refine((c) => Object.keys(c).length > 0, { message: 'a flow condition needs at least one key' })
    .describe(
      "A condition on the information flow: the target's labels, the labels the session has seen, and what the arguments carry. Without a flow state it fails (a deny applies, an allow does not).",
    );

  /** A declarative condition: every part given must hold. */
  const ruleCondition = z
    .strictObject({
      args: z
        .record(z.string().min(1).max(256), argConstraint)
        .optional()
        .describe('Constraints on the arguments, by argument name.'),
      agent: agentConstraint.optional(),
      annotations: annotationConstraint.optional(),
      flow: flowCondition.optional(),
    })
    .describe('A condition on the call; every part given must hold.');

  return {
    argConstraint,
    agentConstraint,
    annotationConstraint,
    flowCondition,
    ruleCondition,
    /** A condition written in code (`grant(..., { when })`): refused whole when it is not plain data. */
    plainRuleCondition: plainData(ruleCondition),
  };
}

type ConditionSchemas = ReturnType<typeof buildConditionSchemas>;
export type ArgConstraint = z.infer<ConditionSchemas['argConstraint']>;
export type RuleCondition = z.infer<ConditionSchemas['ruleCondition']>;
/** The `flow` part of a {@link RuleCondition}. */
export type FlowCondition = z.infer<ConditionSchemas['flowCondition']>;

// MCP 2025-11-25 ToolAnnotations: defaults when a hint is absent.
const HINT_DEFAULTS: Readonly<Record<keyof ToolHints, boolean>> = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

type Check = (value: unknown) => ConditionResult;

/** Kleene AND of `checks` on `value`: any false is false; else any error is an error; else true. */
function allOf<T>(checks: readonly ((value: T) => ConditionResult)[], value: T): ConditionResult {
  let out: ConditionResult = HOLDS;
  for (let i = 0; i < checks.length; i++) {
    const r = checks[i]!(value);
    if (r === FAILS_TO_HOLD) return FAILS_TO_HOLD;
    if (r === ERRORED) out = ERRORED;
  }
  return out;
}

function typeOf(v: unknown): string {
  return v === null ? 'null' : typeof v;
}

function bool(b: boolean): ConditionResult {
  return b ? HOLDS : FAILS_TO_HOLD;
}

/** A path-aware prefix test: `/data` holds for `/data` and `/data/x`, never `/data2` or `/data/../etc`. */
function pathPrefix(prefix: string): Check {
  const p = posix.normalize(prefix).replace(/\/+$/, '');
  const base = p === '' ? '/' : p;
  return (value) => {
    if (typeof value !== 'string') return ERRORED;
    // A relative path, or one a Windows server might read differently, cannot be placed: fail closed.
    if (!value.startsWith('/') || value.includes('\0') || value.includes('\\')) return ERRORED;
    // Most paths are already normal: skip the (slow) normalize when no `.`, `..` or `//` segment is there.
    const v = /\/\.|\/\//.test(value) ? posix.normalize(value) : value;
    return bool(base === '/' || v === base || v.startsWith(`${base}/`));
  };
}

function constraintChecks(c: ArgConstraint | NonNullable<ArgConstraint['each']>): Check[] {
  const checks: Check[] = [];
  if (c.equals !== undefined) {
    const want = c.equals;
    checks.push((v) => (typeOf(v) !== typeOf(want) ? ERRORED : bool(v === want)));
  }
  if (c.oneOf !== undefined) {
    const options = c.oneOf;
    const types = new Set(options.map(typeOf));
    checks.push((v) => (!types.has(typeOf(v)) ? ERRORED : bool(options.includes(v as never))));
  }
  if (c.noneOf !== undefined) {
    const options = c.noneOf;
    const types = new Set(options.map(typeOf));
    checks.push((v) => (!types.has(typeOf(v)) ? ERRORED : bool(!options.includes(v as never))));
  }
  if (c.startsWith !== undefined) {
    const prefix = c.startsWith;
    checks.push(
      prefix.startsWith('/')
        ? pathPrefix(prefix)
        : (v) => (typeof v !== 'string' ? ERRORED : bool(v.startsWith(prefix))),
    );
  }
  if (c.pattern !== undefined) {
    const re = compileSafeRegex(c.pattern);
    checks.push((v) =>
      typeof v !== 'string' || v.length > MAX_REGEX_INPUT_LENGTH ? ERRORED : bool(re.test(v)),
    );
  }
  if (c.maxLength !== undefined) {
    const n = c.maxLength;
    checks.push((v) => (typeof v === 'string' || Array.isArray(v) ? bool(v.length <= n) : ERRORED));
  }
  if (c.min !== undefined) {
    const n = c.min;
    checks.push((v) => (typeof v !== 'number' || Number.isNaN(v) ? ERRORED : bool(v >= n)));
  }
  if (c.max !== undefined) {
    const n = c.max;
    checks.push((v) => (typeof v !== 'number' || Number.isNaN(v) ? ERRORED : bool(v <= n)));
  }
  if ('each' in c && c.each !== undefined) {
    const itemChecks = constraintChecks(c.each);
    checks.push((v) => {
      if (!Array.isArray(v)) return ERRORED;
      let out: ConditionResult = HOLDS;
      for (const item of v) {
        const r = allOf(itemChecks, item);
        if (r === FAILS_TO_HOLD) return FAILS_TO_HOLD;
        if (r === ERRORED) out = ERRORED;
      }
      return out;
    });
  }
  return checks;
}

/** Reads an own property only: inherited (polluted) properties are never argument values. */
function own(obj: Readonly<Record<string, unknown>> | undefined, key: string): unknown {
  return obj !== undefined && obj !== null && Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** Compiles a parsed declarative condition. Throws `PolicyError` for an unsafe regular expression. */
export function compileCondition(cond: RuleCondition): Evaluator {
  const parts: Evaluator[] = [];
  for (const [name, constraint] of Object.entries(cond.args ?? {})) {
    const checks = constraintChecks(constraint);
    parts.push((input) => {
      const v = own(input.args, name);
      // A missing argument does not satisfy a constraint on it (and so does not trigger a deny on it).
      return v === undefined ? FAILS_TO_HOLD : allOf(checks, v);
    });
  }
  if (cond.agent !== undefined) {
    const checks = constraintChecks(cond.agent);
    parts.push((input) => (input.agent === undefined ? FAILS_TO_HOLD : allOf(checks, input.agent)));
  }
  if (cond.annotations !== undefined) {
    const checks = Object.entries(cond.annotations).map(([key, want]): Check => {
      const fallback = HINT_DEFAULTS[key as keyof ToolHints];
      return (hints) => {
        const got = own(hints as Record<string, unknown> | undefined, key) ?? fallback;
        return typeof got !== 'boolean' ? ERRORED : bool(got === want);
      };
    });
    parts.push((input) => allOf(checks, input.annotations));
  }
  // Last: the other parts are cheaper, and one that does not hold spares the provenance search.
  if (cond.flow !== undefined) parts.push(compileFlow(cond.flow));
  return (input) => allOf(parts, input);
}

/** A declarative condition in words: `id starts with "drafts/" and city is one of "Berlin", "Oslo"`. */
export function describeCondition(when: RuleCondition): string {
  const parts: string[] = [];
  const describe = (subject: string, c: Record<string, unknown>) => {
    const q = (v: unknown) => JSON.stringify(v);
    if (c.equals !== undefined) parts.push(`${subject} is ${q(c.equals)}`);
    if (Array.isArray(c.oneOf)) parts.push(`${subject} is one of ${c.oneOf.map(q).join(', ')}`);
    if (Array.isArray(c.noneOf)) parts.push(`${subject} is none of ${c.noneOf.map(q).join(', ')}`);
    if (c.startsWith !== undefined) parts.push(`${subject} starts with ${q(c.startsWith)}`);
    if (c.pattern !== undefined) parts.push(`${subject} matches /${String(c.pattern)}/`);
    if (c.maxLength !== undefined) parts.push(`${subject} has at most ${String(c.maxLength)} characters`);
    if (c.min !== undefined) parts.push(`${subject} >= ${String(c.min)}`);
    if (c.max !== undefined) parts.push(`${subject} <= ${String(c.max)}`);
  };
  for (const [arg, c] of Object.entries(when.args ?? {})) describe(arg, c as Record<string, unknown>);
  if (when.agent !== undefined) describe('the agent', when.agent as Record<string, unknown>);
  for (const [hint, value] of Object.entries(when.annotations ?? {}))
    parts.push(`${hint} is ${String(value)}`);
  if (when.flow !== undefined) parts.push(...describeFlow(when.flow));
  return parts.length === 0 ? 'its condition holds' : parts.join(' and ');
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  const t = typeOf(value);
  return t === 'null' ? 'null' : t === 'object' ? 'an object' : `a ${t}`;
}

/**
 * Why one constraint key fails for `value` (it did not hold, or could not be checked), in words. Never shows the
 * value itself: denial reasons go into audit records, which hold argument names only (a value may be a secret).
 */
function whyConstraintFails(
  subject: string,
  key: keyof ArgConstraint,
  c: ArgConstraint,
  value: unknown,
): string {
  const q = (v: unknown) => JSON.stringify(v);
  switch (key) {
    case 'equals':
      return typeOf(value) !== typeOf(c.equals)
        ? `${subject} is ${kindOf(value)}, and the rule wants ${kindOf(c.equals)} equal to ${q(c.equals)}`
        : `${subject} is not ${q(c.equals)}`;
    case 'oneOf':
      return `${subject} is not one of ${(c.oneOf ?? []).map(q).join(', ')}`;
    case 'noneOf':
      return !(c.noneOf ?? []).some((o) => typeOf(o) === typeOf(value))
        ? `${subject} is ${kindOf(value)}, and the rule wants a value of the kinds of ${(c.noneOf ?? []).map(q).join(', ')}`
        : `${subject} is one of ${(c.noneOf ?? []).map(q).join(', ')}`;
    case 'startsWith': {
      const prefix = c.startsWith as string;
      if (typeof value !== 'string')
        return `${subject} is ${kindOf(value)}, and the rule wants text starting with ${q(prefix)}`;
      if (!prefix.startsWith('/')) return `${subject} does not start with ${q(prefix)}`;
      if (!value.startsWith('/')) {
        return `${subject} is a relative path, and the rule wants an absolute path under ${q(prefix)} (a relative path cannot be placed, so it never matches)`;
      }
      if (value.includes('\0') || value.includes('\\')) {
        return `${subject} holds a backslash or NUL character, so it cannot be placed under ${q(prefix)}`;
      }
      return `${subject} is not under ${q(prefix)}`;
    }
    case 'pattern':
      return typeof value !== 'string'
        ? `${subject} is ${kindOf(value)}, and the rule wants text matching /${c.pattern}/`
        : value.length > MAX_REGEX_INPUT_LENGTH
          ? `${subject} is longer than ${MAX_REGEX_INPUT_LENGTH} characters, too long to match against /${c.pattern}/`
          : `${subject} does not match /${c.pattern}/`;
    case 'maxLength':
      return typeof value === 'string' || Array.isArray(value)
        ? `${subject} is longer than ${c.maxLength}`
        : `${subject} is ${kindOf(value)}, which has no length`;
    case 'min':
    case 'max':
      return typeof value !== 'number' || Number.isNaN(value)
        ? `${subject} is ${kindOf(value)}, and the rule wants a number`
        : key === 'min'
          ? `${subject} is below the minimum ${c.min}`
          : `${subject} is above the maximum ${c.max}`;
    default:
      return `${subject} is not accepted by the rule`;
  }
}

/** The first constraint of `c` that `value` fails, in words; undefined when all hold. */
function explainConstraint(subject: string, c: ArgConstraint, value: unknown): string | undefined {
  for (const key of Object.keys(c) as (keyof ArgConstraint)[]) {
    if (c[key] === undefined) continue;
    const [check] = constraintChecks({ [key]: c[key] } as ArgConstraint);
    if (check !== undefined && check(value) !== HOLDS) return whyConstraintFails(subject, key, c, value);
  }
  return undefined;
}

/**
 * Why a declarative condition does not hold for `input`, in words: the first part that fails ("argument 'path' is a
 * relative path, and the rule wants an absolute path under "/data""), naming arguments and types but never a
 * value. Undefined when every part holds. For denials only: it compiles what it needs each time.
 */
export function explainCondition(when: RuleCondition, input: ConditionInput): string | undefined {
  for (const [name, c] of Object.entries(when.args ?? {})) {
    const value = own(input.args, name);
    if (value === undefined) {
      const given = input.args === undefined || input.args === null ? [] : Object.keys(input.args);
      const list = given.length === 0 ? 'no arguments' : `only ${given.map((k) => `'${k}'`).join(', ')}`;
      return `argument '${name}' is missing (the call has ${list})`;
    }
    const why = explainConstraint(`argument '${name}'`, c, value);
    if (why !== undefined) return why;
  }
  if (when.agent !== undefined) {
    if (input.agent === undefined) return 'the call names no agent';
    const why = explainConstraint('the agent', when.agent, input.agent);
    if (why !== undefined) return why;
  }
  if (when.annotations !== undefined) {
    for (const [key, want] of Object.entries(when.annotations)) {
      const got = own(input.annotations as Record<string, unknown> | undefined, key);
      const value = got ?? HINT_DEFAULTS[key as keyof ToolHints];
      if (value !== want)
        return `the tool's ${key} is ${String(value)}${got === undefined ? ' (the default)' : ''}`;
    }
  }
  if (when.flow !== undefined) return explainFlow(when.flow, input);
  return undefined;
}

/** Wraps a `when` function: `true` holds, `false` does not, anything else (or a throw) is an error. */
export function wrapConditionFunction(fn: ConditionFunction): Evaluator {
  return (input) => {
    try {
      const r: unknown = fn(input);
      return r === true ? HOLDS : r === false ? FAILS_TO_HOLD : ERRORED;
    } catch {
      return ERRORED;
    }
  };
}
