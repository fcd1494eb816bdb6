/**
 * A native policy in Cedar (issue 40, `interlock policy export --cedar`): each rule becomes one Cedar policy with
 * the rule's id as `@id`, deciding as the native rule does on every request Cedar can express. What has no exact
 * Cedar form is refused with the rule named, or translated so it can only deny more, never allow more (the
 * guide's "Native features with no Cedar form" table lists each).
 */
import { PolicyError } from '../../errors.js';
import type { ArgConstraint, RuleCondition } from '../conditions.js';
import { compilePattern, display } from '../pattern.js';
import type { Policy, PolicyRule } from '../policy.js';

const A = 'Interlock::Action';

/** A Cedar string literal. */
function str(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** A Cedar `like` pattern from a native glob (`*` within the text stays a wildcard). */
function likePattern(glob: string): string {
  return str(glob);
}

/** A Cedar `like` pattern that matches text starting with `prefix` (a `*` in it is literal). */
function likePrefix(prefix: string): string {
  return `"${prefix.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\*/g, '\\*')}*"`;
}

class NoCedarForm extends Error {}

function refuse(what: string): never {
  throw new NoCedarForm(what);
}

/** The condition on `resource.path` that holds exactly when the native pattern matches a well-formed resource. */
function resourceCondition(pattern: string): string {
  const compiled = compilePattern(pattern);
  if (!pattern.includes('*')) return `resource.path == ${str(pattern)}`;
  const depth = pattern.split(':').length;
  if (compiled.tail === undefined) {
    // The same number of segments and a `like` with the same literal colons: each `*` stays within its segment.
    return `resource.depth == ${depth} && resource.path like ${likePattern(pattern)}`;
  }
  const like = `${pattern.slice(0, -2)}*`;
  // With a final `**`, a `*` before it could cross a colon in `like`; that is exact only when nothing but `*` and
  // `:` follows the first `*` (`mcp:*:**`).
  const afterFirst = like.slice(like.indexOf('*'));
  if (compiled.segments.some((s) => s.glob) && !/^[*:]*$/.test(afterFirst)) {
    refuse(
      `its resource pattern '${display(pattern)}' has a '*' inside a segment before a final '**', which Cedar's 'like' cannot keep within its segment`,
    );
  }
  return `resource.path like ${likePattern(like)}`;
}

/** A check on one value: whether the value has the type the check reads, and whether the check holds. */
interface Check {
  readonly typed: string;
  /** Holds, for an allow (the value has the type). */
  readonly holds: string;
  /** Holds or cannot be decided in Cedar, for a deny (so a deny applies at least as often as natively). */
  readonly holdsOrUnknown: string;
}

function kindOf(v: unknown): string {
  return v === null ? 'null' : typeof v;
}

function scalarEquals(v: string, want: string | number | boolean | null): Check {
  const typed = `${v}.kind == ${str(kindOf(want))}`;
  if (typeof want === 'string') {
    const c = `(${v} has string && ${v}.string == ${str(want)})`;
    return { typed, holds: c, holdsOrUnknown: c };
  }
  if (typeof want === 'boolean') {
    const c = `(${v} has bool && ${v}.bool == ${want})`;
    return { typed, holds: c, holdsOrUnknown: c };
  }
  if (want === null) return { typed, holds: 'true', holdsOrUnknown: 'true' };
  // A number: only whole numbers have a Cedar form (`long`); others are never equal to a whole number.
  const eq = Number.isSafeInteger(want) ? `${v}.long == ${want}` : 'false';
  return {
    typed,
    holds: `(${v} has long && ${eq})`,
    holdsOrUnknown: `(if ${v} has long then ${eq} else true)`,
  };
}

function numberBound(v: string, bound: number, op: '>=' | '<='): Check {
  const n = op === '>=' ? Math.ceil(bound) : Math.floor(bound);
  if (!Number.isSafeInteger(n))
    refuse(`the bound ${bound} is beyond the whole numbers Cedar compares exactly`);
  const c = `${v}.long ${op} ${n}`;
  return {
    typed: `${v}.kind == "number"`,
    holds: `(${v} has long && ${c})`,
    holdsOrUnknown: `(if ${v} has long then ${c} else true)`,
  };
}

function valueChecks(v: string, c: ArgConstraint, subject: string): Check[] {
  const checks: Check[] = [];
  if (c.equals !== undefined) checks.push(scalarEquals(v, c.equals));
  if (c.oneOf !== undefined) {
    const parts = c.oneOf.map((w) => scalarEquals(v, w));
    const kinds = [...new Set(c.oneOf.map(kindOf))].map(str).join(', ');
    checks.push({
      typed: `[${kinds}].contains(${v}.kind)`,
      holds: `(${parts.map((p) => `(${p.typed} && ${p.holds})`).join(' || ')})`,
      holdsOrUnknown: `(${parts.map((p) => `(${p.typed} && ${p.holdsOrUnknown})`).join(' || ')})`,
    });
  }
  if (c.noneOf !== undefined) {
    // None of them: "equal" must hold or be unknown for an allow to be refused, and hold for a deny to be spared.
    const parts = c.noneOf.map((w) => scalarEquals(v, w));
    const kinds = [...new Set(c.noneOf.map(kindOf))].map(str).join(', ');
    checks.push({
      typed: `[${kinds}].contains(${v}.kind)`,
      holds: `!(${parts.map((p) => `(${p.typed} && ${p.holdsOrUnknown})`).join(' || ')})`,
      holdsOrUnknown: `!(${parts.map((p) => `(${p.typed} && ${p.holds})`).join(' || ')})`,
    });
  }
  if (c.startsWith !== undefined) {
    if (c.startsWith.startsWith('/')) {
      refuse(
        `${subject} has a path prefix ('${display(c.startsWith)}'), which the native gate compares on normalized paths`,
      );
    }
    const h = `(${v} has string && ${v}.string like ${likePrefix(c.startsWith)})`;
    checks.push({ typed: `${v}.kind == "string"`, holds: h, holdsOrUnknown: h });
  }
  if (c.pattern !== undefined) refuse(`${subject} has a regular expression, which Cedar does not have`);
  if (c.maxLength !== undefined) {
    const h = `${v}.length <= ${c.maxLength}`;
    checks.push({
      typed: `${v} has length`,
      holds: `(${v} has length && ${h})`,
      holdsOrUnknown: `(if ${v} has length then ${h} else true)`,
    });
  }
  if (c.min !== undefined) checks.push(numberBound(v, c.min, '>='));
  if (c.max !== undefined) checks.push(numberBound(v, c.max, '<='));
  if (c.each !== undefined)
    refuse(`${subject} has 'each', which Cedar cannot apply to every item of an array`);
  return checks;
}

/** The condition as Cedar: `allow` when it holds; `deny` when it holds or fails (a failed condition fails closed). */
function conditionOf(when: RuleCondition, form: 'allow' | 'deny'): string[] {
  // Issue 42: a Cedar policy sees the request only, never what the session has seen or what an argument carries.
  if (when.flow !== undefined)
    refuse('its condition reads the information flow (flow), which a Cedar policy cannot see');
  const parts: string[] = [];
  for (const [name, c] of Object.entries(when.args ?? {})) {
    const v = `context.args.getTag(${str(name)})`;
    const checks = valueChecks(v, c, `argument '${display(name)}'`);
    const each = checks.map((k) =>
      form === 'allow' ? `${k.typed} && ${k.holds}` : `(!(${k.typed}) || ${k.holdsOrUnknown})`,
    );
    parts.push(`(context.args.hasTag(${str(name)}) && ${each.join(' && ')})`);
  }
  if (when.agent !== undefined) {
    const a = when.agent;
    const checks: string[] = [];
    if (a.equals !== undefined) checks.push(`context.agent == ${str(a.equals)}`);
    if (a.oneOf !== undefined) checks.push(`[${a.oneOf.map(str).join(', ')}].contains(context.agent)`);
    if (a.startsWith !== undefined) checks.push(`context.agent like ${likePrefix(a.startsWith)}`);
    if (a.pattern !== undefined)
      refuse('its agent condition has a regular expression, which Cedar does not have');
    parts.push(`(context has agent && ${checks.join(' && ')})`);
  }
  for (const [hint, want] of Object.entries(when.annotations ?? {})) {
    parts.push(`resource.annotations.${hint} == ${String(want)}`);
  }
  return parts;
}

function actionScope(actions: string | readonly string[]): string {
  const list = typeof actions === 'string' ? [actions] : [...actions];
  if (list.includes('*')) return 'action';
  const uids = [...new Set(list)].map((a) => `${A}::${str(a)}`);
  return uids.length === 1 ? `action == ${uids[0]}` : `action in [${uids.join(', ')}]`;
}

function policyText(
  annotations: string[],
  effect: 'permit' | 'forbid',
  action: string,
  when: string[],
): string {
  const head = `${annotations.join('\n')}\n${effect} (principal, ${action}, resource)`;
  return `${head}\nwhen {\n  ${when.join(' &&\n  ')}\n};`;
}

function ruleToCedar(rule: PolicyRule, index: number): string[] {
  const id = rule.id ?? `rule-${index + 1}`;
  if (rule.maxCalls !== undefined) refuse('it has a quota (maxCalls), which a Cedar policy cannot count');
  const scope = [resourceCondition(rule.resource)];
  if (rule.expiresAt !== undefined) scope.push(`context.now < ${Date.parse(rule.expiresAt)}`);
  const annotations = [`@id(${str(id)})`];
  if (rule.description !== undefined) annotations.push(`@description(${str(rule.description)})`);
  const action = actionScope(rule.actions);
  const allowForm = rule.when === undefined ? [] : conditionOf(rule.when, 'allow');
  if (rule.effect === 'allow') return [policyText(annotations, 'permit', action, [...scope, ...allowForm])];
  const denyForm = rule.when === undefined ? [] : conditionOf(rule.when, 'deny');
  if (rule.effect === 'deny') return [policyText(annotations, 'forbid', action, [...scope, ...denyForm])];
  // ask: an @ask permit where the condition holds, and a forbid where it fails (a failed condition fails closed).
  const out = [policyText([...annotations, '@ask'], 'permit', action, [...scope, ...allowForm])];
  if (rule.when !== undefined) {
    const failed = `!(${allowForm.join(' && ')})`;
    out.push(policyText([`@id(${str(`${id}.failed`)})`], 'forbid', action, [...scope, ...denyForm, failed]));
  }
  return out;
}

/**
 * The Cedar text of a valid native policy (`parsePolicy` output). Throws `PolicyError` naming the first rule with
 * no Cedar form (a quota, a regular expression, a path prefix, `each`, a flow condition, a glob Cedar cannot keep in
 * its segment).
 */
export function policyToCedar(policy: Policy): string {
  const out: string[] = [
    '// Exported from an Interlock policy by `interlock policy export --cedar` (issue 40).',
    '// Validate against schema/interlock.cedarschema; each @id is the native rule id.',
  ];
  policy.rules.forEach((rule, i) => {
    try {
      out.push('', ...ruleToCedar(rule, i).flatMap((p, k) => (k === 0 ? [p] : ['', p])));
    } catch (err) {
      if (!(err instanceof NoCedarForm)) throw err;
      const id = rule.id ?? `rule-${i + 1}`;
      throw new PolicyError(`Rule '${id}' (rules[${i}]) has no Cedar form: ${err.message}.`, {
        pattern: rule.resource,
      });
    }
  });
  return `${out.join('\n')}\n`;
}
