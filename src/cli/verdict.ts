/**
 * The policy's verdict for a tool as a whole, before any arguments are known: `allowed`, `denied`, `ask`,
 * or `conditional` when a rule allows it for some arguments only. Uses only side-effect-free checks
 * (`check`, `couldAllow`): listing tools never consumes a `maxCalls` quota.
 */
import type { DecidingRule, DecisionFlow } from '../errors.js';

export { describeCondition };

import { CapabilitySet } from '../security/capability-set.js';
import { describeCondition } from '../security/conditions.js';
import type { RuleInfo } from '../security/rules.js';
import type { CheckContext, Decision, DecisionEffect } from '../security/types.js';

/** What the policy says about a tool. */
export interface ToolVerdict {
  verdict: 'allowed' | 'denied' | 'ask' | 'conditional';
  effect: DecisionEffect;
  rule: DecidingRule | undefined;
  reason: string;
  /** The information flow the decision was made on, when a flow condition took part (issue 42). */
  flow?: DecisionFlow | undefined;
}

/** Verdicts of one capability set; caches a probe per conditional rule. */
export class VerdictExplainer {
  readonly #caps: CapabilitySet;
  readonly #probes = new Map<string, CapabilitySet>();

  constructor(capabilities: CapabilitySet) {
    this.#caps = capabilities;
  }

  /** The decision for one call with known arguments, as a verdict. */
  decide(resource: string, action: string, context: CheckContext): ToolVerdict {
    return fromDecision(this.#caps.check(resource, action, context));
  }

  /** The verdict for a tool when the arguments are not known. */
  explain(resource: string, action: string, context: Omit<CheckContext, 'args'>): ToolVerdict {
    const decision = this.#caps.check(resource, action, context);
    if (decision.allowed || decision.effect === 'ask') return fromDecision(decision);
    // A deny a flow condition took part in was decided on the session given (issue 42), not on arguments: without
    // arguments a constraint on one does not hold, so it could not have applied.
    if (decision.effect === 'deny' && decision.flow !== undefined) return fromDecision(decision);
    if (!this.#caps.couldAllow(resource, action, context)) return fromDecision(decision);
    const rule = this.#conditionalRule(resource, action);
    return {
      verdict: 'conditional',
      effect: rule?.effect ?? decision.effect,
      rule:
        rule === undefined
          ? decision.rule
          : { id: rule.id, pattern: rule.pattern, effect: rule.effect, description: rule.description },
      reason:
        rule === undefined
          ? `Allowed only for some arguments. ${decision.reason}`
          : `Rule '${rule.id}' allows it only when ${rule.when === undefined ? 'its condition holds' : describeCondition(rule.when)}.`,
    };
  }

  /** For a request no rule decided: which rule allows it for other arguments ("Rule 'x' allows it only when ..."). */
  conditionHint(
    resource: string,
    action: string,
    context: Omit<CheckContext, 'args'> = {},
  ): string | undefined {
    const verdict = this.explain(resource, action, context);
    return verdict.verdict === 'conditional' ? verdict.reason : undefined;
  }

  /** The first live allow or ask rule with a condition whose pattern and actions cover the request. */
  #conditionalRule(resource: string, action: string): RuleInfo | undefined {
    return this.#liveRules().find(
      (rule) => rule.condition !== 'none' && !this.#spent(rule) && this.#covers(rule, resource, action),
    );
  }

  /**
   * True when some live allow or ask rule covers the request, whatever its condition or quota says. False means
   * a default deny has only one fix: a new rule.
   */
  ruleCovers(resource: string, action: string): boolean {
    return this.#liveRules().some((rule) => this.#covers(rule, resource, action));
  }

  #liveRules(): RuleInfo[] {
    const now = Date.now();
    return this.#caps.rules.filter(
      (rule) => rule.effect !== 'deny' && (rule.expiresAt === undefined || now < rule.expiresAt),
    );
  }

  #spent(rule: RuleInfo): boolean {
    const usage = this.#caps.usage(rule.id);
    return usage !== undefined && usage.used >= usage.maxCalls;
  }

  /** Whether the rule's pattern and actions cover the request (its condition aside). */
  #covers(rule: RuleInfo, resource: string, action: string): boolean {
    let probe = this.#probes.get(rule.id);
    if (probe === undefined) {
      probe = new CapabilitySet({ onWarning: () => {} });
      probe.grant(rule.pattern, rule.actions);
      this.#probes.set(rule.id, probe);
    }
    return probe.check(resource, action).allowed;
  }
}

function fromDecision(decision: Decision): ToolVerdict {
  const verdict = decision.allowed ? 'allowed' : decision.effect === 'ask' ? 'ask' : 'denied';
  return {
    verdict,
    effect: decision.effect,
    rule: decision.rule,
    reason: decision.reason,
    ...(decision.flow !== undefined ? { flow: decision.flow } : {}),
  };
}
