/**
 * Cedar policies behind the capability set (issue 40): a policy set in Cedar's language, parsed and validated
 * against the published schema at load, decides the requests of a `CapabilitySet` made with `fromCedar`. The
 * decision has the native one's shape (effect, allowed, reason, deciding rule = the policy's `@id`), so the gate,
 * audit and traces are the same. Cedar gives default deny and forbid-wins; on top of it:
 * - `@ask` on a permit makes it an ask rule (a human approves; any forbid still wins);
 * - an evaluation error in any policy denies the call (fails closed), where Cedar alone would skip the policy;
 * - a request Cedar cannot express (an action the schema does not have for the resource) is denied.
 */
import type { DecidingRule } from '../../errors.js';
import { PolicyError } from '../../errors.js';
import { display, trimStop } from '../pattern.js';
import { RULE_ID_MESSAGE, RULE_ID_RE } from '../rules.js';
import type { CheckContext, Decision } from '../types.js';
import { cedarRequest } from './entities.js';
import { cedarSchemaText } from './schema.js';
import { cedar, cedarMessages } from './wasm.js';

/** One policy of the set, with the decisions it makes (built once, as native rules do). */
interface CedarRule {
  readonly id: string;
  readonly index: number;
  readonly effect: 'permit' | 'forbid';
  readonly ask: boolean;
  readonly decision: Decision;
  readonly failedDecision: Decision;
  readonly approvedDecision: Decision;
}

let nextSetId = 0;

/** A validated Cedar policy set, ready to decide. */
export class CedarPolicy {
  /** The policy text as given. */
  readonly text: string;
  readonly #rules: ReadonlyMap<string, CedarRule>;
  readonly #setId: string;
  readonly #staticPolicies: Record<string, string>;

  /**
   * Parses `text` and validates it against the schema (Cedar's strict mode). Throws `PolicyError` with Cedar's
   * own message when it does not parse or type-check, and for templates, duplicate or malformed `@id`s.
   */
  constructor(text: string, source = 'Cedar policy') {
    if (typeof text !== 'string') throw new PolicyError(`The ${source} must be text.`);
    const wasm = cedar();
    const parts = wasm.policySetTextToParts(text);
    if (parts.type === 'failure') {
      throw new PolicyError(`The ${source} does not parse: ${cedarMessages(parts.errors)}`);
    }
    if (parts.policy_templates.length > 0) {
      throw new PolicyError(
        `The ${source} holds ${parts.policy_templates.length} template(s); Interlock takes static policies only (write the linked policies out).`,
      );
    }
    // Cedar returns the parts sorted by their generated ids (policy0, policy1, policy10, policy2...): restore the
    // order they were written in, which decides which rule a decision names.
    const generated = parts.policies.map((_, i) => `policy${i}`).sort();
    const ordered: { index: number; text: string }[] = generated.map((id, k) => ({
      index: Number(id.slice(6)),
      text: parts.policies[k]!,
    }));
    ordered.sort((a, b) => a.index - b.index);
    const rules = new Map<string, CedarRule>();
    const policies: Record<string, string> = {};
    for (const { index, text: policyText } of ordered) {
      const json = wasm.policyToJson(policyText);
      if (json.type === 'failure') {
        throw new PolicyError(`The ${source} does not parse: ${cedarMessages(json.errors)}`);
      }
      const annotations = json.json.annotations ?? {};
      const id = annotations.id ?? `policy${index}`;
      const where = `policy ${index + 1} of the ${source}`;
      if (!RULE_ID_RE.test(id))
        throw new PolicyError(`Invalid @id '${display(id)}' on ${where}: ${RULE_ID_MESSAGE}.`);
      if (rules.has(id))
        throw new PolicyError(`Two policies of the ${source} have the id '${id}'; give each its own @id.`);
      const ask = Object.hasOwn(annotations, 'ask');
      if (ask && json.json.effect !== 'permit') {
        throw new PolicyError(`@ask is for permit policies; '${id}' (${where}) is a forbid.`);
      }
      rules.set(id, compileCedarRule(id, index, json.json.effect, ask, annotations.description));
      policies[id] = policyText;
    }
    const checked = wasm.validate({
      schema: cedarSchemaText(),
      policies: { staticPolicies: policies },
      validationSettings: { mode: 'strict' },
    });
    if (checked.type === 'failure') {
      throw new PolicyError(`The ${source} does not parse: ${cedarMessages(checked.errors)}`);
    }
    if (checked.validationErrors.length > 0) {
      const lines = checked.validationErrors.map((e) => `${e.policyId}: ${cedarMessages([e.error])}`);
      throw new PolicyError(
        `The ${source} does not type-check against Interlock's Cedar schema: ${lines.join('; ')}`,
      );
    }
    this.#setId = `interlock-${process.pid}-${++nextSetId}`;
    const prepared = wasm.preparsePolicySet(this.#setId, { staticPolicies: policies });
    if (prepared.type === 'failure') {
      throw new PolicyError(`The ${source} does not parse: ${cedarMessages(prepared.errors)}`);
    }
    this.text = text;
    this.#rules = rules;
    this.#staticPolicies = policies;
  }

  /**
   * The decision for `action` on the well-formed `resource`. With `approved`, an `@ask` permit counts as allowed
   * (the approver said yes). Never throws: anything that goes wrong denies.
   */
  decide(
    resource: string,
    action: string,
    context: CheckContext | undefined,
    now: number,
    approved: boolean,
  ): Decision {
    const request = cedarRequest(resource, action, context, now);
    if (request === undefined) {
      return Object.freeze({
        allowed: false,
        effect: 'default-deny',
        reason: `Denied: '${display(action)}' on '${display(resource)}' has no Cedar action (default deny).`,
      });
    }
    let answer: ReturnType<ReturnType<typeof cedar>['statefulIsAuthorized']>;
    try {
      answer = cedar().statefulIsAuthorized({
        ...request,
        preparsedPolicySetId: this.#setId,
        validateRequest: false,
      });
    } catch (err) {
      return failed(
        `Cedar could not evaluate the request (${err instanceof Error ? err.message : String(err)})`,
      );
    }
    if (answer.type === 'failure')
      return failed(`Cedar could not evaluate the request (${cedarMessages(answer.errors)})`);
    const { decision, diagnostics } = answer.response;
    // Cedar skips a policy whose evaluation errs; Interlock fails closed: the call is denied.
    const errored = diagnostics.errors[0];
    if (errored !== undefined) {
      const rule = this.#rules.get(errored.policyId);
      return rule?.failedDecision ?? failed(`Cedar policy '${errored.policyId}' failed to evaluate`);
    }
    const deciding = this.#first(diagnostics.reason);
    if (decision === 'deny') return deciding?.decision ?? defaultDeny(resource, action);
    if (deciding === undefined) return failed('Cedar allowed without a deciding policy');
    // Ask beats allow: any satisfied @ask permit needs the approver.
    const ask = this.#first(diagnostics.reason, true);
    if (ask !== undefined) return approved ? ask.approvedDecision : ask.decision;
    return deciding.decision;
  }

  /**
   * Whether some request for `action` on `resource` could be allowed whatever its arguments: partial evaluation
   * with the arguments unknown. Cedar decides `allow` (some permit holds for any arguments), `deny` (a forbid
   * holds for any arguments, or no permit can), or leaves residuals (it depends on the arguments: listed).
   */
  couldAllow(resource: string, action: string, context: CheckContext | undefined, now: number): boolean {
    const request = cedarRequest(resource, action, context, now, true);
    if (request === undefined) return false;
    try {
      const answer = cedar().isAuthorizedPartial({
        ...request,
        policies: { staticPolicies: this.#staticPolicies },
      });
      if (answer.type === 'failure') return false;
      const { decision, mayBeDetermining, satisfied } = answer.response;
      if (decision !== null) return decision === 'allow';
      const permits = [...mayBeDetermining, ...satisfied].filter(
        (id) => this.#rules.get(id)?.effect === 'permit',
      );
      return permits.length > 0;
    } catch {
      return false;
    }
  }

  /** The earliest-written rule among `ids` (only `@ask` ones with `asks`). */
  #first(ids: readonly string[], asks = false): CedarRule | undefined {
    let best: CedarRule | undefined;
    for (const id of ids) {
      const rule = this.#rules.get(id);
      if (rule === undefined || (asks && !rule.ask)) continue;
      if (best === undefined || rule.index < best.index) best = rule;
    }
    return best;
  }
}

function failed(why: string): Decision {
  return Object.freeze({
    allowed: false,
    effect: 'deny',
    reason: `Denied: ${why}, and the gate fails closed.`,
  });
}

function defaultDeny(resource: string, action: string): Decision {
  const r = display(resource);
  const a = display(action);
  return Object.freeze({
    allowed: false,
    effect: 'default-deny',
    reason: `No Cedar policy permits '${a}' on '${r}' (default deny).`,
    // The fix is the operator's (issue 39): never in `reason`.
    operatorHint: `To allow it, add a Cedar policy: permit (principal, action == Interlock::Action::"${a}", resource) when { resource.path == "${r}" };`,
  });
}

function compileCedarRule(
  id: string,
  index: number,
  effect: 'permit' | 'forbid',
  ask: boolean,
  description: string | undefined,
): CedarRule {
  const deciding: DecidingRule = Object.freeze({
    id,
    pattern: `cedar:${id}`,
    effect: effect === 'forbid' ? 'deny' : ask ? 'ask' : 'allow',
    description,
  });
  const named = `Cedar policy '${id}'`;
  const why = description !== undefined ? `: ${display(trimStop(description))}` : '';
  const base = { ruleId: id, rule: deciding };
  const decision: Decision = Object.freeze(
    effect === 'forbid'
      ? { allowed: false, effect: 'deny', ...base, reason: `Denied by ${named}${why}.` }
      : ask
        ? {
            allowed: false,
            effect: 'ask',
            ...base,
            reason: `Needs approval: ${named} asks a human first${why}.`,
          }
        : { allowed: true, effect: 'allow', ...base, reason: `Allowed by ${named}.` },
  );
  const failedDecision: Decision = Object.freeze({
    allowed: false,
    effect: 'deny',
    ...base,
    reason: `Denied: ${named} failed to evaluate for this call, and a failed condition fails closed.`,
  });
  const approvedDecision: Decision = Object.freeze({
    allowed: true,
    effect: 'allow',
    ...base,
    reason: `Allowed: ${named} asked for approval and the approver allowed it.`,
  });
  return { id, index, effect, ask, decision, failedDecision, approvedDecision };
}
