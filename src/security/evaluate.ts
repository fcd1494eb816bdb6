/**
 * One set's decision over the rules whose pattern matched (issue 3, "Semantics"): any applicable deny
 * wins, then ask, then allow; nothing applicable is a default deny. A failed condition fails closed.
 */
import {
  type ConditionInput,
  describeCondition,
  ERRORED,
  explainCondition,
  FAILS_TO_HOLD,
  HOLDS,
} from './conditions.js';
import { flowFacts } from './flow-conditions.js';
import { display, trimStop } from './pattern.js';
import { type CompiledRule, quotaUsed } from './rules.js';
import type { CheckContext, Decision } from './types.js';

/** Unexpired and for this action (the pattern already matched). */
export function applies(rule: CompiledRule, action: string, now: number): boolean {
  // Expiry boundary: a rule applies while now < expiresAt; at expiresAt it no longer does.
  if (rule.expiresAt !== undefined && now >= rule.expiresAt) return false;
  return rule.anyAction || rule.onlyAction === action || rule.actions.has(action);
}

/**
 * One pass over the matched rules, keeping what decides: the earliest applicable deny (or ask whose
 * condition failed), ask, unlimited allow, allow with quota left, and allow with its quota used up.
 */
class Scan {
  deny: CompiledRule | undefined;
  denyFailed = false;
  ask: CompiledRule | undefined;
  allow: CompiledRule | undefined;
  quota: CompiledRule | undefined;
  spent: CompiledRule | undefined;
  /** The earliest allow that matched but whose condition did not hold, to explain a default deny. */
  unmet: CompiledRule | undefined;
  #input: ConditionInput | undefined;

  /** What the conditions saw (built at the first condition). */
  get input(): ConditionInput | undefined {
    return this.#input;
  }

  constructor(
    readonly resource: string,
    readonly action: string,
    readonly context: CheckContext | undefined,
    readonly now: number,
  ) {}

  rules(list: readonly CompiledRule[]): void {
    for (let i = 0; i < list.length; i++) {
      const rule = list[i]!;
      const deny = this.deny;
      // Once a deny applies only an earlier deny could change the deciding rule, never the outcome.
      if (deny !== undefined && (rule.effect === 'allow' || deny.seq < rule.seq)) continue;
      if (!applies(rule, this.action, this.now)) continue;
      let holds: number = HOLDS;
      if (rule.condition !== undefined) {
        const c = this.context;
        this.#input ??= {
          args: c?.args,
          agent: c?.agent,
          annotations: c?.annotations,
          flow: c?.flow,
          labels: c?.labels,
          resource: this.resource,
          action: this.action,
          now: this.now,
        };
        holds = rule.condition(this.#input);
      }
      // An allow whose condition does not hold, or cannot be checked (a relative path against an absolute-path
      // condition), does not apply; the earliest one explains the default deny (issue 18 item 3).
      if (rule.effect === 'allow' && holds !== HOLDS) {
        if (this.unmet === undefined || rule.seq < this.unmet.seq) this.unmet = rule;
        continue;
      }
      if (holds === FAILS_TO_HOLD) continue;
      if (rule.effect === 'deny' || (rule.effect === 'ask' && holds === ERRORED)) {
        this.deny = rule;
        this.denyFailed = holds === ERRORED;
      } else if (rule.effect === 'ask') {
        if (this.ask === undefined || rule.seq < this.ask.seq) this.ask = rule;
      } else if (rule.maxCalls === undefined) {
        if (this.allow === undefined || rule.seq < this.allow.seq) this.allow = rule;
      } else if (quotaUsed(rule, this.now) < rule.maxCalls) {
        if (this.quota === undefined || rule.seq < this.quota.seq) this.quota = rule;
      } else if (this.spent === undefined || rule.seq < this.spent.seq) {
        this.spent = rule;
      }
    }
  }
}

/**
 * The decision of one set (its parent aside) over `matched`. With `approved`, an applicable ask counts
 * as allowed. With `spentAllows`, an allow rule whose quota is used up still applies (a re-check of a call that
 * was already charged). An allow through a rule with `maxCalls` pushes that rule on `quotas` (when given), for the
 * caller to consume once the whole decision allows.
 */
export function evaluate(
  matched: readonly CompiledRule[],
  resource: string,
  action: string,
  context: CheckContext | undefined,
  now: number,
  approved: boolean,
  quotas: CompiledRule[] | undefined,
  spentAllows = false,
): Decision {
  const scan = new Scan(resource, action, context, now);
  scan.rules(matched);
  const input = scan.input;
  if (scan.deny !== undefined)
    return withFlow(scan.deny, scan.denyFailed ? scan.deny.failedDecision : scan.deny.decision, input);
  if (scan.ask !== undefined)
    return withFlow(scan.ask, approved ? scan.ask.approvedDecision : scan.ask.decision, input);
  if (scan.allow !== undefined) return withFlow(scan.allow, scan.allow.decision, input);
  if (scan.quota !== undefined) {
    quotas?.push(scan.quota);
    return withFlow(scan.quota, scan.quota.decision, input);
  }
  // A re-check of a call already charged to this rule: its own unit may have been the last one.
  if (spentAllows && scan.spent !== undefined) return withFlow(scan.spent, scan.spent.decision, input);
  return defaultDeny(resource, action, scan.spent, scan.unmet, input);
}

/**
 * The rule's decision, with the flow it was made on when a flow condition of the rule took part (issue 42): a fresh
 * object then, since the rule's own decisions are shared by every call.
 */
function withFlow(rule: CompiledRule, decision: Decision, input: ConditionInput | undefined): Decision {
  if (rule.flow === undefined || input === undefined) return decision;
  return Object.freeze({ ...decision, flow: flowFacts(rule.flow, input) });
}

/** A default deny. Its reason is built when first read: `has()` and `couldAllow()` never pay for it. */
function defaultDeny(
  resource: string,
  action: string,
  spent: CompiledRule | undefined,
  unmet: CompiledRule | undefined,
  input: ConditionInput | undefined,
): Decision {
  let reason: string | undefined;
  return Object.freeze({
    allowed: false,
    effect: 'default-deny',
    // An allow whose flow condition did not hold explains the deny: the flow it saw is audited with it.
    ...(unmet?.flow !== undefined && input !== undefined ? { flow: flowFacts(unmet.flow, input) } : {}),
    // The fix is the operator's (issue 39): a model or a remote caller reads `reason`, which never says it.
    get operatorHint(): string | undefined {
      return spent === undefined && unmet === undefined ? grantHint(resource, action) : undefined;
    },
    get reason(): string {
      if (reason === undefined) {
        const what = `'${display(action)}' on '${display(resource)}'`;
        if (spent !== undefined) {
          const per = spent.info.per === undefined ? '' : ` per ${spent.info.per}`;
          reason = `Rule '${spent.id}' allowed ${what} but its quota of ${spent.maxCalls} calls${per} is used up, and no other rule allows it (default deny).`;
        } else if (unmet !== undefined) {
          // Tell the caller (often a model) which rule would allow it, so it can change its arguments.
          const note = unmet.deciding.description;
          const about = note === undefined ? '' : ` (${display(trimStop(note))})`;
          reason = `Rule '${unmet.id}'${about} allows ${what} only when ${unmetCondition(unmet, input)} (default deny).`;
        } else {
          reason = `No rule allows ${what} (default deny).`;
        }
      }
      return reason;
    },
  });
}

/** The rule that would allow a plain default deny, as a policy file and as code write it. */
function grantHint(resource: string, action: string): string {
  const r = display(resource);
  const a = display(action);
  return `To allow it, add a policy rule { effect: allow, resource: '${r}', actions: ${a} } (in code: grant('${r}', '${a}')).`;
}

/**
 * The condition of an allow rule that did not apply, and what about this call failed it: `path starts with "/data",
 * and argument 'path' is "a.txt", a relative path, ...`. Never advises an unconditional grant.
 */
function unmetCondition(rule: CompiledRule, input: ConditionInput | undefined): string {
  const when = rule.info.when;
  if (when === undefined) {
    return 'its condition function returns true, and for this call it returned false or failed';
  }
  const why = input === undefined ? undefined : explainCondition(when, input);
  const wanted = display(describeCondition(when));
  return why === undefined
    ? `${wanted}, and it does not hold for this call`
    : `${wanted}; for this call ${display(why)}`;
}
