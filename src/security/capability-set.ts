/**
 * The capability set (issue 3, "Model"): rules that grant, deny or ask for actions on resources, and the
 * decision for one request. Default deny; any applicable deny beats any allow, whatever the order or
 * repetition of rules; ask beats allow. Rules are indexed by scheme and literal server (or native tool
 * name), so a check costs the rules of one server plus the rules with a wildcard there, not all rules.
 */
import { PermissionDeniedError, PolicyError } from '../errors.js';
import { type ConditionInput, ERRORED, FAILS_TO_HOLD, HOLDS } from './conditions.js';
import { display, matchPattern, patternCovers, resourceProblem, SCHEME_ACTIONS } from './pattern.js';
import {
  POLICY_VERSION,
  type Policy,
  type PolicyRule,
  PolicyRuleSchema,
  parsePolicy,
  parseWith,
} from './policy.js';
import {
  type CompiledRule,
  compileRule,
  isProblem,
  isValidRuleId,
  type RuleInfo,
  type RuleOptions,
  type RuleSpec,
} from './rules.js';
import type { CheckContext, Decision } from './types.js';

/** Options of a {@link CapabilitySet}. */
export interface CapabilitySetOptions {
  /** Time source, ms since the epoch; used for expiry and `ttlMs`. @default DEFAULT_CLOCK (`Date.now`) */
  clock?: (() => number) | undefined;
  /**
   * Receives warnings (`allowAll`, a rule added already expired).
   * @default DEFAULT_ON_WARNING (`process.emitWarning` with a code `INTERLOCK_*`)
   */
  onWarning?: ((message: string, code: string) => void) | undefined;
}

/** The default clock. */
export const DEFAULT_CLOCK = (): number => Date.now();
/** The default warning sink: a process warning with the given code, so it shows even without a logger. */
export const DEFAULT_ON_WARNING = (message: string, code: string): void => {
  process.emitWarning(message, { code });
};

/** Rules of one scheme: by literal second segment, and those with a wildcard there. */
interface Bucket {
  literal: Map<string, readonly CompiledRule[]>;
  wildcard: readonly CompiledRule[];
}

const NONE: readonly CompiledRule[] = Object.freeze([]);

type ApprovedEntry = (
  set: CapabilitySet,
  resource: string,
  action: string,
  context?: CheckContext,
) => Decision;
// Set by a static block of the class: reachable from this module (the gate), never from the public API.
let approvedEntry: ApprovedEntry;

/** A set of capability rules. See the security guide for the model. */
export class CapabilitySet {
  readonly #clock: () => number;
  readonly #warn: (message: string, code: string) => void;
  #parent: CapabilitySet | undefined;
  readonly #buckets = new Map<string, Bucket>();
  readonly #byId = new Map<string, CompiledRule>();
  #seq = 0;
  #snapshot: readonly RuleInfo[] | undefined;

  constructor(options: CapabilitySetOptions = {}) {
    this.#clock = options.clock ?? DEFAULT_CLOCK;
    this.#warn = options.onWarning ?? DEFAULT_ON_WARNING;
  }

  /** A set that allows every action on every resource. For tests only: warns loudly on creation. */
  static allowAll(options: CapabilitySetOptions = {}): CapabilitySet {
    const set = new CapabilitySet(options);
    set.#warn(
      'CapabilitySet.allowAll() allows every action on every resource, with no checks. Use it in tests only.',
      'INTERLOCK_ALLOW_ALL',
    );
    for (const scheme of Object.keys(SCHEME_ACTIONS)) {
      set.grant(`${scheme}:**`, '*', { id: `allow-all-${scheme}`, description: 'CapabilitySet.allowAll()' });
    }
    return set;
  }

  /** A set from a policy object (parsed JSON or YAML). Throws `PolicyError` naming the rule and field. */
  static fromPolicy(policy: unknown, options: CapabilitySetOptions = {}): CapabilitySet {
    const parsed = parsePolicy(policy);
    const set = new CapabilitySet(options);
    set.#addPolicyRules(parsed.rules, 'rules');
    return set;
  }

  /** Allows `actions` on resources matching `pattern`. Returns the rule id. */
  grant(pattern: string, actions: string | readonly string[], options: RuleOptions = {}): string {
    return this.#addSpec({ effect: 'allow', pattern, actions, options: { ...options } });
  }

  /** Denies `actions` on resources matching `pattern`; beats every allow. Returns the rule id. */
  deny(pattern: string, actions: string | readonly string[], options: RuleOptions = {}): string {
    return this.#addSpec({ effect: 'deny', pattern, actions, options: { ...options } });
  }

  /** Requires human approval (through the gate's approver); beats allow. Returns the rule id. */
  ask(pattern: string, actions: string | readonly string[], options: RuleOptions = {}): string {
    return this.#addSpec({ effect: 'ask', pattern, actions, options: { ...options } });
  }

  /**
   * Removes the rule with this id (any effect), or every allow and ask rule with exactly this pattern
   * (a pattern holds ':', an id never does; deny rules go only by id). Takes effect on the next check,
   * here and in every derived set. Returns whether anything was removed.
   */
  revoke(ruleIdOrPattern: string): boolean {
    if (typeof ruleIdOrPattern !== 'string') return false;
    const doomed = ruleIdOrPattern.includes(':')
      ? [...this.#byId.values()].filter((r) => r.effect !== 'deny' && r.pattern.source === ruleIdOrPattern)
      : [this.#byId.get(ruleIdOrPattern)].filter((r) => r !== undefined);
    for (const rule of doomed) this.#remove(rule);
    return doomed.length > 0;
  }

  /** The rules, in the order they were added: a frozen snapshot. */
  get rules(): readonly RuleInfo[] {
    this.#snapshot ??= Object.freeze([...this.#byId.values()].map((r) => r.info));
    return this.#snapshot;
  }

  /** Calls used and allowed so far for an allow rule with `maxCalls`; `undefined` for other rules. */
  usage(ruleId: string): { readonly used: number; readonly maxCalls: number } | undefined {
    const rule = this.#byId.get(ruleId);
    return rule?.maxCalls === undefined
      ? undefined
      : Object.freeze({ used: rule.used, maxCalls: rule.maxCalls });
  }

  /** The decision for `action` on `resource`. Side-effect free: consumes no quota. */
  check(resource: string, action: string, context?: CheckContext): Decision {
    return this.#decide(resource, action, context, false, undefined);
  }

  /**
   * The gate's form of {@link check}: the same decision, and when it allows through an allow rule with
   * `maxCalls`, one unit is consumed in the same synchronous step, so concurrent callers can never
   * overshoot the quota. A used-up rule no longer applies.
   */
  authorize(resource: string, action: string, context?: CheckContext): Decision {
    return this.#authorize(resource, action, context, false);
  }

  /** `check(...).allowed`: true only when allowed without approval. */
  has(resource: string, action: string, context?: CheckContext): boolean {
    return this.check(resource, action, context).allowed;
  }

  /** Throws `PermissionDeniedError` unless {@link check} allows. Consumes no quota. */
  require(resource: string, action: string, context?: CheckContext): void {
    const d = this.check(resource, action, context);
    if (!d.allowed) throw new PermissionDeniedError({ resource, action, reason: d.reason, rule: d.rule });
  }

  /**
   * Whether some allow or ask rule might apply and no unconditional deny does: for listing only the
   * tools a model could ever call. Without `context.args`, conditions count as possibly true. The check
   * at call time still decides.
   */
  couldAllow(resource: string, action: string, context?: CheckContext): boolean {
    if (context?.args !== undefined) {
      const d = this.check(resource, action, context);
      return d.allowed || d.effect === 'ask';
    }
    if (resourceProblem(resource) !== undefined || typeof action !== 'string') return false;
    const now = context?.now ?? this.#clock();
    let possible = false;
    for (const rule of this.#candidates(resource)) {
      if (!this.#applicable(rule, resource, action, now)) continue;
      if (rule.effect === 'deny') {
        if (rule.condition === undefined) return false;
      } else if (rule.maxCalls === undefined || rule.used < rule.maxCalls) {
        possible = true;
      }
    }
    return possible && (this.#parent === undefined || this.#parent.couldAllow(resource, action, context));
  }

  /**
   * A child set for a sub-agent that can never exceed this one: a child allow holds only where this
   * set also allows at check time, so a deny or revoke here reaches every descendant at once. A child
   * allow or ask rule that no allow or ask rule here covers throws `PolicyError` (never clamped).
   */
  derive(
    rules: readonly PolicyRule[] | ((child: CapabilitySet) => void),
    options: Pick<CapabilitySetOptions, 'onWarning'> = {},
  ): CapabilitySet {
    const child = new CapabilitySet({ clock: this.#clock, onWarning: options.onWarning ?? this.#warn });
    child.#parent = this;
    if (typeof rules === 'function') {
      rules(child);
    } else {
      const parsed = parseWith(policyRulesSchema, rules, 'derived rules', 'rules');
      child.#addPolicyRules(parsed, 'rules');
    }
    return child;
  }

  /** The rules as a policy object (`fromPolicy` reads it back). Throws for function conditions or a derived set. */
  toJSON(): Policy {
    if (this.#parent !== undefined) {
      throw new PolicyError(
        'A derived set cannot be serialized alone: its bound is its parent at check time, which a policy file cannot hold. Serialize the parent, and derive again after loading.',
      );
    }
    const rules = this.rules.map((info): PolicyRule => {
      if (info.condition === 'function') {
        throw new PolicyError(
          `Rule '${info.id}' has a function condition, which a policy cannot hold. Use a declarative condition to serialize it.`,
          { pattern: info.pattern },
        );
      }
      return {
        id: info.id,
        effect: info.effect,
        resource: info.pattern,
        actions: [...info.actions],
        ...(info.description !== undefined ? { description: info.description } : {}),
        ...(info.expiresAt !== undefined ? { expiresAt: new Date(info.expiresAt).toISOString() } : {}),
        ...(info.maxCalls !== undefined ? { maxCalls: info.maxCalls } : {}),
        ...(info.when !== undefined ? { when: structuredClone(info.when) } : {}),
      };
    });
    return { version: POLICY_VERSION, rules };
  }

  static {
    approvedEntry = (set, resource, action, context) => set.#authorize(resource, action, context, true);
  }

  #authorize(
    resource: string,
    action: string,
    context: CheckContext | undefined,
    approved: boolean,
  ): Decision {
    const quotas: CompiledRule[] = [];
    const decision = this.#decide(resource, action, context, approved, quotas);
    if (!decision.allowed || quotas.length === 0) return decision;
    // A condition may have re-entered and used the last unit meanwhile: decide again if so.
    if (quotas.some((q) => q.used >= (q.maxCalls ?? 0)))
      return this.#authorize(resource, action, context, approved);
    for (const q of quotas) q.used++;
    return decision;
  }

  #decide(
    resource: string,
    action: string,
    context: CheckContext | undefined,
    approved: boolean,
    quotas: CompiledRule[] | undefined,
  ): Decision {
    const problem = resourceProblem(resource);
    if (problem !== undefined) {
      return Object.freeze({
        allowed: false,
        effect: 'default-deny',
        reason: `Denied: '${display(resource)}' is not a well-formed resource: ${problem}.`,
      });
    }
    // `*` is a wildcard in rules, never a requested action: asking for `*` must not dodge a deny on `execute`.
    if (typeof action !== 'string' || !ACTION_NAME.test(action)) {
      return Object.freeze({
        allowed: false,
        effect: 'default-deny',
        reason: `Denied: '${display(action)}' is not an action name.`,
      });
    }
    return this.#decideAt(resource, action, context, context?.now ?? this.#clock(), approved, quotas);
  }

  #decideAt(
    resource: string,
    action: string,
    context: CheckContext | undefined,
    now: number,
    approved: boolean,
    quotas: CompiledRule[] | undefined,
  ): Decision {
    const own = this.#evaluate(resource, action, context, now, approved, quotas);
    const parent = this.#parent;
    if (parent === undefined || !(own.allowed || own.effect === 'ask')) return own;
    const up = parent.#decideAt(resource, action, context, now, approved, quotas);
    if (!(up.allowed || up.effect === 'ask')) {
      return Object.freeze({
        allowed: false,
        effect: up.effect === 'deny' ? 'deny' : 'default-deny',
        ruleId: up.ruleId,
        rule: up.rule,
        reason: `Denied by the parent set: ${up.reason}`,
      });
    }
    // Both allow (or ask): an ask on either side still needs the approver.
    if (own.effect === 'ask') return own;
    return up.effect === 'ask' ? up : own;
  }

  /** This set's own decision, ignoring any parent. */
  #evaluate(
    resource: string,
    action: string,
    context: CheckContext | undefined,
    now: number,
    approved: boolean,
    quotas: CompiledRule[] | undefined,
  ): Decision {
    let deny: CompiledRule | undefined; // earliest applicable deny, or ask whose condition failed
    let denyFailed = false;
    let ask: CompiledRule | undefined;
    let allow: CompiledRule | undefined;
    let quota: CompiledRule | undefined;
    let spent: CompiledRule | undefined;
    let input: ConditionInput | undefined;
    const bucket = this.#bucket(resource);
    if (bucket === undefined) return defaultDeny(resource, action, undefined);
    const lists = [bucket.literal.get(literalKey(resource)) ?? NONE, bucket.wildcard];
    for (const list of lists) {
      for (const rule of list) {
        // Once a deny applies only an earlier deny could change the deciding rule, never the outcome.
        if (deny !== undefined && (rule.effect === 'allow' || deny.seq < rule.seq)) continue;
        if (!this.#applicable(rule, resource, action, now)) continue;
        let holds = HOLDS as number;
        if (rule.condition !== undefined) {
          input ??= { ...context, resource, action, now };
          holds = rule.condition(input);
        }
        if (holds === FAILS_TO_HOLD) continue;
        if (rule.effect === 'deny' || (rule.effect === 'ask' && holds === ERRORED)) {
          deny = rule;
          denyFailed = holds === ERRORED;
        } else if (holds !== HOLDS) {
          // an allow whose condition failed does not apply
        } else if (rule.effect === 'ask') {
          if (ask === undefined || rule.seq < ask.seq) ask = rule;
        } else if (rule.maxCalls === undefined) {
          if (allow === undefined || rule.seq < allow.seq) allow = rule;
        } else if (rule.used < rule.maxCalls) {
          if (quota === undefined || rule.seq < quota.seq) quota = rule;
        } else if (spent === undefined || rule.seq < spent.seq) {
          spent = rule;
        }
      }
    }
    if (deny !== undefined) return denyFailed ? deny.failedDecision : deny.decision;
    if (ask !== undefined) return approved ? ask.approvedDecision : ask.decision;
    if (allow !== undefined) return allow.decision;
    if (quota !== undefined) {
      quotas?.push(quota);
      return quota.decision;
    }
    return defaultDeny(resource, action, spent);
  }

  #applicable(rule: CompiledRule, resource: string, action: string, now: number): boolean {
    // Expiry boundary: a rule applies while now < expiresAt; at expiresAt it no longer does.
    if (rule.expiresAt !== undefined && now >= rule.expiresAt) return false;
    if (!rule.anyAction && !rule.actions.has(action)) return false;
    return matchPattern(rule.pattern, resource);
  }

  #bucket(resource: string): Bucket | undefined {
    return this.#buckets.get(resource.slice(0, resource.indexOf(':')));
  }

  *#candidates(resource: string): Iterable<CompiledRule> {
    const bucket = this.#bucket(resource);
    if (bucket === undefined) return;
    yield* bucket.literal.get(literalKey(resource)) ?? NONE;
    yield* bucket.wildcard;
  }

  #addPolicyRules(rules: readonly PolicyRule[], at: string): void {
    rules.forEach((r, i) => {
      const { effect, resource, actions, ...options } = r;
      this.#addSpec({ effect, pattern: resource, actions, options }, `${at}[${i}]`);
    });
  }

  #addSpec(spec: RuleSpec, at?: string): string {
    const fail = (field: string, message: string, cause?: unknown): never => {
      const where =
        at === undefined ? `Cannot add ${spec.effect} rule for '${display(spec.pattern)}'` : `Invalid policy`;
      const path = at === undefined ? field : `${at}.${field}`;
      const pattern = typeof spec.pattern === 'string' ? spec.pattern : String(spec.pattern);
      throw new PolicyError(`${where}: ${path}: ${message}`, { pattern, cause });
    };
    const seq = ++this.#seq;
    const given = spec.options.id;
    if (given !== undefined && !isValidRuleId(given)) {
      fail(
        'id',
        "an id is 1-128 characters from A-Z a-z 0-9 _ . @ / - (no ':', so it never looks like a pattern)",
      );
    }
    if (given !== undefined && this.#byId.has(given)) fail('id', `a rule with id '${given}' already exists`);
    let id = given ?? `rule-${seq}`;
    for (let n = seq; this.#byId.has(id); ) id = `rule-${++n}`;
    const now = this.#clock();
    const rule = compileRule(spec, seq, id, now);
    if (isProblem(rule)) return fail(rule.field, rule.message, rule.cause);
    if (this.#parent !== undefined && rule.effect !== 'deny' && !this.#parent.#covers(rule, now)) {
      fail(
        'resource',
        `the rule asks for more than the parent set has: no allow or ask rule of the parent covers '${display(rule.pattern.source)}' for ${rule.info.actions.join(', ')}. A derived set can only narrow its parent.`,
      );
    }
    if (rule.expiresAt !== undefined && now >= rule.expiresAt) {
      this.#warn(
        `Rule '${id}' (${display(rule.pattern.source)}) is already expired; it will never apply.`,
        'INTERLOCK_RULE_EXPIRED',
      );
    }
    this.#insert(rule);
    return id;
  }

  /** True when some live allow or ask rule here covers the child rule's pattern and actions. */
  #covers(child: CompiledRule, now: number): boolean {
    for (const p of this.#byId.values()) {
      if (p.effect === 'deny' || (p.expiresAt !== undefined && now >= p.expiresAt)) continue;
      if (p.maxCalls !== undefined && p.used >= p.maxCalls) continue;
      const actionsOk =
        p.anyAction || (!child.anyAction && [...child.actions].every((a) => p.actions.has(a)));
      if (actionsOk && patternCovers(p.pattern, child.pattern)) return true;
    }
    return false;
  }

  // Buckets are copied on write, so a check running (say, inside a condition) never sees a half-update.
  #insert(rule: CompiledRule): void {
    const scheme = rule.pattern.scheme;
    let bucket = this.#buckets.get(scheme);
    if (bucket === undefined) {
      bucket = { literal: new Map(), wildcard: NONE };
      this.#buckets.set(scheme, bucket);
    }
    const key = rule.pattern.key;
    if (key === undefined) bucket.wildcard = Object.freeze([...bucket.wildcard, rule]);
    else bucket.literal.set(key, Object.freeze([...(bucket.literal.get(key) ?? NONE), rule]));
    this.#byId.set(rule.id, rule);
    this.#snapshot = undefined;
  }

  #remove(rule: CompiledRule): void {
    const bucket = this.#buckets.get(rule.pattern.scheme);
    const key = rule.pattern.key;
    if (bucket !== undefined) {
      if (key === undefined) bucket.wildcard = Object.freeze(bucket.wildcard.filter((r) => r !== rule));
      else
        bucket.literal.set(key, Object.freeze((bucket.literal.get(key) ?? NONE).filter((r) => r !== rule)));
    }
    this.#byId.delete(rule.id);
    this.#snapshot = undefined;
  }
}

const policyRulesSchema = PolicyRuleSchema.array();
const ACTION_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** The literal second segment of a well-formed resource (server, or native tool name). */
function literalKey(resource: string): string {
  const first = resource.indexOf(':');
  const second = resource.indexOf(':', first + 1);
  return second < 0 ? resource.slice(first + 1) : resource.slice(first + 1, second);
}

function defaultDeny(resource: string, action: string, spent: CompiledRule | undefined): Decision {
  const what = `'${display(action)}' on '${display(resource)}'`;
  const reason =
    spent === undefined
      ? `No rule allows ${what} (default deny). To allow it: grant('${display(resource)}', '${display(action)}').`
      : `Rule '${spent.id}' allowed ${what} but its quota of ${spent.maxCalls} calls is used up, and no other rule allows it (default deny).`;
  return Object.freeze({ allowed: false, effect: 'default-deny', reason });
}

/**
 * For the gate only (not exported from the area's index): `authorize` after the approver allowed an
 * ask, so asks count as approved. Re-decides from scratch, so a revoke during the wait still wins.
 */
export function authorizeApproved(
  set: CapabilitySet,
  resource: string,
  action: string,
  context?: CheckContext,
): Decision {
  return approvedEntry(set, resource, action, context);
}
