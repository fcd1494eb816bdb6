/**
 * The capability set (issue 3, "Model"): rules that grant, deny or ask for actions on resources, and the
 * decision for one request. Default deny; any applicable deny beats any allow, whatever the order or
 * repetition of rules; ask beats allow. Rules are indexed by scheme and literal server (or native tool
 * name), so a check costs the rules of one server plus the rules with a wildcard there, not all rules.
 */
import { PermissionDeniedError, PolicyError } from '../errors.js';
import { tupleKey } from '../json.js';
import { CedarPolicy } from './cedar/engine.js';
import { applies, evaluate } from './evaluate.js';
import { FlowLabels, type ServerLabels } from './flow-labels.js';
import { parseWith } from './parse.js';
import { display, patternCovers, SCHEME_ACTIONS } from './pattern.js';
import { POLICY_VERSION, type Policy, type PolicyRule, parsePolicy, policySchemas } from './policy.js';
import { sharedCharges } from './quota-charges.js';
import { DEFAULT_MATCH_CACHE_SIZE, type Match, RuleIndex } from './rule-index.js';
import {
  type CompiledRule,
  chargeQuota,
  compileRule,
  isProblem,
  isValidRuleId,
  quotaUsed,
  RULE_ID_MESSAGE,
  type RuleInfo,
  type RuleOptions,
  type RuleSpec,
} from './rules.js';
import type { CheckContext, Decision, QuotaCounter } from './types.js';

/** Options of a {@link CapabilitySet}. */
export interface CapabilitySetOptions {
  /** Time source, ms since the epoch; used for expiry and `ttlMs`. @default DEFAULT_CLOCK (`Date.now`) */
  clock?: (() => number) | undefined;
  /**
   * Receives warnings (`allowAll`, a rule added already expired).
   * @default DEFAULT_ON_WARNING (`process.emitWarning` with a code `INTERLOCK_*`)
   */
  onWarning?: ((message: string, code: string) => void) | undefined;
  /**
   * How many resources' pattern matches are remembered (a match cache, cleared by every add and
   * revoke; decisions themselves are never cached). 0 turns it off. @default DEFAULT_MATCH_CACHE_SIZE (4096)
   */
  matchCacheSize?: number | undefined;
  /**
   * Counts `maxCalls` quotas here instead of in this process, so they hold across every process sharing it: a
   * `StateStore` from `mcp-interlock/state` (Redis). Keys are the rule id, the agent and the principal; give
   * quota rules explicit ids. The gate charges the counter after deciding; if the counter cannot answer, the
   * call is denied (fails closed). Derived sets use their parent's. @default quotas count in this process
   */
  quotaCounter?: QuotaCounter | undefined;
  /**
   * The project file's per-server labels (`mcpServers.{name}.labels` and `sink`, issue 42), added to the policy's
   * in {@link CapabilitySet.flowLabels}. Kept across `replaceRules`; derived sets use their parent's. @default none
   */
  serverLabels?: Readonly<Record<string, ServerLabels | undefined>> | undefined;
}

/** The default clock. */
export const DEFAULT_CLOCK = (): number => Date.now();
/** The default warning sink: a process warning with the given code, so it shows even without a logger. */
export const DEFAULT_ON_WARNING = (message: string, code: string): void => {
  process.emitWarning(message, { code });
};

type ApprovedEntry = (
  set: CapabilitySet,
  resource: string,
  action: string,
  context?: CheckContext,
) => Decision;

// Set by a static block of the class: reachable from this module (the gate), never from the public API.
let approvedEntry: ApprovedEntry;
let recheckEntry: ApprovedEntry;

/** A set of capability rules. See the security guide for the model. */
export class CapabilitySet {
  readonly #clock: () => number;
  readonly #warn: (message: string, code: string) => void;
  #parent: CapabilitySet | undefined;
  #index: RuleIndex;
  #policyRevision: string | undefined;
  /** A Cedar policy that decides instead of the rules (issue 40); a derived set's own rules stay native. */
  #cedar: CedarPolicy | undefined;
  readonly #matchCacheSize: number;
  readonly #quotaCounter: QuotaCounter | undefined;
  readonly #serverLabels: CapabilitySetOptions['serverLabels'];
  /** Whether `serverLabels` names any server (read on every call while flow is off: computed once). */
  readonly #labelsServers: boolean;
  /** The policy's `labels` and `flow` sections; the resolver is built from them when first asked for. */
  #flowPolicy: Pick<Policy, 'labels' | 'flow'> = {};
  #flowLabels: FlowLabels | undefined;
  /** Rules with a flow condition ever added (a revoke leaves tracking on). */
  #flowRules = 0;
  #seq = 0;
  #revision = 0;

  constructor(options: CapabilitySetOptions = {}) {
    this.#clock = options.clock ?? DEFAULT_CLOCK;
    this.#warn = options.onWarning ?? DEFAULT_ON_WARNING;
    this.#matchCacheSize = options.matchCacheSize ?? DEFAULT_MATCH_CACHE_SIZE;
    this.#quotaCounter = options.quotaCounter;
    this.#serverLabels = options.serverLabels;
    this.#labelsServers = Object.keys(options.serverLabels ?? {}).length > 0;
    this.#index = new RuleIndex(this.#matchCacheSize);
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
    set.#flowPolicy = flowPolicyOf(parsed);
    return set;
  }

  /**
   * A set decided by a Cedar policy (issue 40) instead of native rules: `text` is parsed and validated against the
   * published schema (`schema/interlock.cedarschema`); a policy that does not type-check throws `PolicyError` with
   * Cedar's message. Decisions, audit and traces have the native shape; the deciding rule is the policy's `@id`.
   */
  static fromCedar(text: string, options: CapabilitySetOptions = {}): CapabilitySet {
    const set = new CapabilitySet(options);
    set.#cedar = new CedarPolicy(text);
    return set;
  }

  /**
   * Where the labels of targets come from (issue 42): the policy's `labels` and `flow` sections and the
   * `serverLabels` option. The invocation pipeline puts `labelsFor(resource, annotations).all` into the check
   * context (`context.labels`) and records results with `.content`; `createFlowState()` makes a session's state. A
   * derived set has its parent's; `replaceRules` makes a new one.
   */
  get flowLabels(): FlowLabels {
    if (this.#parent !== undefined) return this.#parent.flowLabels;
    this.#flowLabels ??= new FlowLabels({ ...this.#flowPolicy, servers: this.#serverLabels });
    return this.#flowLabels;
  }

  /** Whether calls decided here track flow (issue 42): the policy labels something, or a rule has a flow condition. */
  get tracksFlow(): boolean {
    if (this.#parent?.tracksFlow === true || this.#flowRules > 0) return true;
    const { labels, flow } = this.#flowPolicy;
    return (labels?.length ?? 0) > 0 || flow !== undefined || this.#labelsServers;
  }

  /** The Cedar policy text when this set was made with {@link fromCedar}, else `undefined`. */
  get cedarPolicy(): string | undefined {
    return this.#cedar?.text;
  }

  /**
   * Replaces every rule with those of `policy`, at once: the new rules are compiled and checked first (a bad
   * policy throws `PolicyError` and changes nothing), then swapped in. The revision moves, so calls waiting to
   * be sent are decided again. `policyRevision` labels the policy (a version from a shared store) in audit records.
   * Quota counts in this process start over; shared quotas live in their counter.
   */
  replaceRules(policy: unknown, options: { policyRevision?: string | undefined } = {}): void {
    const parsed = parsePolicy(policy);
    const fresh =
      this.#parent === undefined
        ? new CapabilitySet({
            clock: this.#clock,
            onWarning: this.#warn,
            matchCacheSize: this.#matchCacheSize,
            quotaCounter: this.#quotaCounter,
          })
        : this.#parent.derive([], { onWarning: this.#warn });
    fresh.#addPolicyRules(parsed.rules, 'rules');
    this.#cedar = undefined;
    // A derived set keeps its parent's labels: its own policy's labels would be unseen (and could only remove).
    this.#flowPolicy = flowPolicyOf(parsed);
    this.#flowLabels = undefined;
    this.#index = fresh.#index;
    this.#flowRules += fresh.#flowRules;
    this.#seq = fresh.#seq;
    this.#policyRevision = options.policyRevision;
    this.#revision++;
  }

  /** The label of the policy last loaded with {@link replaceRules} (a shared policy's version), if any. */
  get policyRevision(): string | undefined {
    return this.#policyRevision;
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
      ? [...this.#index.values()].filter((r) => r.effect !== 'deny' && r.pattern.source === ruleIdOrPattern)
      : [this.#index.get(ruleIdOrPattern)].filter((r) => r !== undefined);
    for (const rule of doomed) this.#index.remove(rule);
    if (doomed.length > 0) this.#revision++;
    return doomed.length > 0;
  }

  /**
   * A number that changes whenever a rule of this set or of a set it derives from is added or removed. The
   * manager notes it when a call is authorized and decides again, right before the request is sent, only when
   * it moved: a revoke reaches calls still waiting for a slot or a reconnect.
   */
  get revision(): number {
    return this.#revision + (this.#parent?.revision ?? 0);
  }

  /** The rules, in the order they were added: a frozen snapshot. */
  get rules(): readonly RuleInfo[] {
    return this.#index.infos();
  }

  /** Calls used and allowed so far by a `maxCalls` rule; `undefined` for others, or when a shared counter counts. */
  usage(ruleId: string): { readonly used: number; readonly maxCalls: number } | undefined {
    const rule = this.#index.get(ruleId);
    return rule?.maxCalls === undefined || this.#quotaCounter !== undefined
      ? undefined
      : Object.freeze({ used: quotaUsed(rule, this.#clock()), maxCalls: rule.maxCalls });
  }

  /** The decision for `action` on `resource`. Side-effect free: consumes no quota. */
  check(resource: string, action: string, context?: CheckContext): Decision {
    return this.#decide(resource, action, context, false, undefined, false);
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
    if (!d.allowed) {
      throw new PermissionDeniedError({ resource, action, reason: d.reason, rule: d.rule, decision: d });
    }
  }

  /** True when this set is `ancestor` or was derived from it (at any depth): it can never exceed it. */
  derivesFrom(ancestor: CapabilitySet): boolean {
    for (let set: CapabilitySet | undefined = this; set !== undefined; set = set.#parent) {
      if (set === ancestor) return true;
    }
    return false;
  }

  /**
   * Whether some allow or ask rule might apply and no unconditional deny does: for listing only the
   * tools a model could ever call. Without `context.args`, conditions count as possibly true. The check
   * at call time still decides.
   */
  couldAllow(resource: string, action: string, context?: CheckContext): boolean {
    const match = this.#index.match(resource);
    // A flow condition may hold: what the session sees next is not known, so it never makes a target "never".
    if (
      context?.args !== undefined &&
      (match.problem !== undefined || !match.rules.some((r) => r.flow !== undefined))
    ) {
      const d = this.check(resource, action, context);
      return d.allowed || d.effect === 'ask';
    }
    if (match.problem !== undefined || typeof action !== 'string') return false;
    const now = context?.now ?? this.#clock();
    if (this.#cedar !== undefined) return this.#cedar.couldAllow(resource, action, context, now);
    let possible = false;
    for (const rule of match.rules) {
      if (!applies(rule, action, now)) continue;
      if (rule.effect === 'deny') {
        if (rule.condition === undefined) return false;
      } else if (rule.maxCalls === undefined || quotaUsed(rule, now) < rule.maxCalls) {
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
    const child = new CapabilitySet({
      clock: this.#clock,
      onWarning: options.onWarning ?? this.#warn,
      matchCacheSize: this.#matchCacheSize,
      quotaCounter: this.#quotaCounter,
    });
    child.#parent = this;
    if (typeof rules === 'function') {
      rules(child);
    } else {
      const parsed = parseWith(policySchemas().ruleList, rules, 'derived rules', 'rules');
      child.#addPolicyRules(parsed, 'rules');
    }
    return child;
  }

  /** The rules as a policy object (`fromPolicy` reads it back). Throws for function conditions or a derived set. */
  toJSON(): Policy {
    if (this.#cedar !== undefined) {
      throw new PolicyError(
        'A set made from a Cedar policy has no native form: keep its Cedar text (cedarPolicy) instead.',
      );
    }
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
        ...(info.per !== undefined ? { per: info.per } : {}),
        ...(info.when !== undefined ? { when: structuredClone(info.when) } : {}),
      };
    });
    return { version: POLICY_VERSION, ...structuredClone(this.#flowPolicy), rules };
  }

  static {
    approvedEntry = (set, resource, action, context) => set.#authorize(resource, action, context, true);
    recheckEntry = (set, resource, action, context) =>
      set.#decide(resource, action, context, true, undefined, true);
  }

  #authorize(
    resource: string,
    action: string,
    context: CheckContext | undefined,
    approved: boolean,
  ): Decision {
    const quotas: CompiledRule[] = [];
    const decision = this.#decide(resource, action, context, approved, quotas, false);
    if (!decision.allowed || quotas.length === 0) return decision;
    // A condition may have re-entered and used the last unit meanwhile: decide again if so.
    const counter = this.#quotaCounter;
    if (counter !== undefined) {
      // Shared: the gate charges the counter. A fresh object carries the charges (rule decisions are shared).
      const pending = Object.freeze({ ...decision });
      const agent = context?.agent ?? '';
      const principal = context?.principal ?? '';
      sharedCharges.set(pending, {
        counter,
        charges: quotas.map((q) => ({
          rule: q,
          // Issue 38: a JSON array, not names joined by U+001F ((a, b␟c) and (a␟b, c) shared one counter).
          key: tupleKey(q.id, agent, principal),
          limit: q.maxCalls ?? 0,
          windowMs: q.windowMs,
        })),
      });
      return pending;
    }
    const now = context?.now ?? this.#clock();
    if (quotas.some((q) => quotaUsed(q, now) >= (q.maxCalls ?? 0)))
      return this.#authorize(resource, action, context, approved);
    for (const q of quotas) chargeQuota(q, now);
    return decision;
  }

  #decide(
    resource: string,
    action: string,
    context: CheckContext | undefined,
    approved: boolean,
    quotas: CompiledRule[] | undefined,
    recheck: boolean,
  ): Decision {
    const match = this.#index.match(resource);
    if (match.problem !== undefined) {
      return Object.freeze({
        allowed: false,
        effect: 'default-deny',
        reason: `Denied: '${display(resource)}' is not a well-formed resource: ${match.problem}.`,
      });
    }
    // `*` is a wildcard in rules, never a requested action: asking for `*` must not dodge a deny on `execute`.
    if (
      action !== 'execute' &&
      action !== 'read' &&
      action !== 'get' &&
      (typeof action !== 'string' || !ACTION_NAME.test(action))
    ) {
      return Object.freeze({
        allowed: false,
        effect: 'default-deny',
        reason: `Denied: '${display(action)}' is not an action name.`,
      });
    }
    return this.#decideAt(resource, action, context, context?.now, approved, quotas, match, recheck);
  }

  /** `now` is read from the clock only when a rule needs it (reading it costs more than a check). */
  #decideAt(
    resource: string,
    action: string,
    context: CheckContext | undefined,
    given: number | undefined,
    approved: boolean,
    quotas: CompiledRule[] | undefined,
    match: Match,
    recheck: boolean,
  ): Decision {
    const now = given ?? (this.#index.timed || this.#cedar !== undefined ? this.#clock() : undefined);
    const cedarPolicy = this.#cedar;
    const own =
      cedarPolicy !== undefined
        ? cedarPolicy.decide(resource, action, context, now ?? 0, approved || recheck)
        : evaluate(
            match.rules,
            resource,
            action,
            context,
            now ?? Number.NaN,
            approved || recheck,
            quotas,
            recheck,
          );
    const parent = this.#parent;
    if (parent === undefined || !(own.allowed || own.effect === 'ask')) return own;
    const up = parent.#decideAt(
      resource,
      action,
      context,
      now,
      approved,
      quotas,
      parent.#index.match(resource),
      recheck,
    );
    if (!(up.allowed || up.effect === 'ask')) {
      return Object.freeze({
        allowed: false,
        effect: up.effect === 'deny' ? 'deny' : 'default-deny',
        ruleId: up.ruleId,
        rule: up.rule,
        reason: `Denied by the parent set: ${up.reason}`,
        ...(up.flow !== undefined ? { flow: up.flow } : {}),
      });
    }
    // Both allow (or ask): an ask on either side still needs the approver.
    if (own.effect === 'ask') return own;
    return up.effect === 'ask' ? up : own;
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
      fail('id', RULE_ID_MESSAGE);
    }
    if (given !== undefined && this.#index.get(given) !== undefined) {
      fail('id', `a rule with id '${given}' already exists`);
    }
    let id = given ?? `rule-${seq}`;
    for (let n = seq; this.#index.get(id) !== undefined; ) id = `rule-${++n}`;
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
    this.#index.insert(rule);
    if (rule.flow !== undefined) this.#flowRules++;
    this.#revision++;
    return id;
  }

  /**
   * True when some live allow or ask rule here covers the child rule's pattern and actions. Under a Cedar policy
   * nothing is refused here: the child's allows still hold only where the Cedar policy allows at check time.
   */
  #covers(child: CompiledRule, now: number): boolean {
    if (this.#cedar !== undefined) return true;
    for (const p of this.#index.values()) {
      if (p.effect === 'deny' || (p.expiresAt !== undefined && now >= p.expiresAt)) continue;
      if (p.maxCalls !== undefined && quotaUsed(p, now) >= p.maxCalls) continue;
      const actionsOk =
        p.anyAction || (!child.anyAction && [...child.actions].every((a) => p.actions.has(a)));
      if (actionsOk && patternCovers(p.pattern, child.pattern)) return true;
    }
    return false;
  }
}

const ACTION_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** The information-flow sections of a parsed policy, without keys it does not have (so `toJSON` adds none). */
function flowPolicyOf(policy: Policy): Pick<Policy, 'labels' | 'flow'> {
  return {
    ...(policy.labels !== undefined ? { labels: policy.labels } : {}),
    ...(policy.flow !== undefined ? { flow: policy.flow } : {}),
  };
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

/**
 * For the gate only: the decision again for a call that was already authorized (asks count as approved, and the
 * quota unit the call was charged counts as its own). Consumes nothing.
 */
export function recheckAuthorized(
  set: CapabilitySet,
  resource: string,
  action: string,
  context?: CheckContext,
): Decision {
  return recheckEntry(set, resource, action, context);
}
