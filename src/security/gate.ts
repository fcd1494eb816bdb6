/**
 * The gate (issue 3, "The gate" and "Audit"): the one place a request is authorized before anything is
 * sent to a server. It decides with the capability set, asks the approver for `ask` rules (no approver
 * means deny), writes one audit record per decision, and throws when the call may not proceed.
 */
import { AuditError, PermissionDeniedError } from '../errors.js';
import { authorizeApproved, type CapabilitySet, recheckAuthorized } from './capability-set.js';
import { chargeSharedQuotas } from './quota-charges.js';
import type { AccessRequest, Approver, AuditRecord, AuditSink, Decision } from './types.js';

/** What to do when the audit sink fails. */
export type AuditFailureMode = 'block' | 'continue';

/** The default {@link AuditFailureMode}: an unaudited call does not proceed. */
export const DEFAULT_AUDIT_FAILURE: AuditFailureMode = 'block';

/** Options of a {@link CapabilityGate}. */
export interface CapabilityGateOptions {
  /** The set every request is decided by. */
  capabilities: CapabilitySet;
  /** Asked when an `ask` rule decides; resolve `true` to allow once. @default none (ask is deny) */
  approver?: Approver | undefined;
  /** Where decisions are recorded. @default none */
  audit?: AuditSink | undefined;
  /**
   * Whether a failing sink blocks an allowed call (`AuditError`). A failing sink never turns a deny
   * into an allow. @default DEFAULT_AUDIT_FAILURE ('block')
   */
  auditFailure?: AuditFailureMode | undefined;
  /**
   * Serializer that puts redacted argument values in audit records. Without it records hold only the
   * argument names. @default none
   */
  redact?: ((args: Readonly<Record<string, unknown>>) => unknown) | undefined;
  /** Time source for audit records, ms since the epoch. @default `Date.now` */
  clock?: (() => number) | undefined;
  /** Told about sink failures that did not block (auditFailure 'continue'). @default none */
  onAuditError?: ((error: unknown, record: AuditRecord | undefined) => void) | undefined;
}

const NO_KEYS: readonly string[] = Object.freeze([]);

// Calls to one tool name the same arguments again and again, and every record keeps its list of names as long as the
// record lives (a memory sink holds a thousand). Records whose names match the last list share that one frozen array.
let lastKeys: readonly string[] = NO_KEYS;
function argumentKeysOf(args: object): readonly string[] {
  const keys = Object.keys(args).sort();
  const last = lastKeys;
  if (keys.length === last.length) {
    let same = true;
    for (let i = 0; i < keys.length; i++) {
      if (keys[i] !== last[i]) {
        same = false;
        break;
      }
    }
    if (same) return last;
  }
  lastKeys = Object.freeze(keys);
  return lastKeys;
}

// toISOString is the costliest part of an audit record. Records of one second share its ISO prefix (up to the
// decimal point), and only the milliseconds are written per record.
let secondStart = Number.NaN;
let secondPrefix = '';
function isoTime(ms: number): string {
  const within = ms - secondStart;
  if (within >= 0 && within < 1000 && Number.isInteger(within))
    return `${secondPrefix}${within < 10 ? '00' : within < 100 ? '0' : ''}${within}Z`;
  const iso = new Date(ms).toISOString();
  if (Number.isInteger(ms)) {
    secondStart = ms - (((ms % 1000) + 1000) % 1000);
    secondPrefix = iso.slice(0, -4);
  }
  return iso;
}

/**
 * Told the record of a decision the gate made for one request, the same frozen record the audit sink got (issue 43:
 * a decision is recorded once, in one shape): the invocation pipeline puts it on the request's span.
 * `auditFailed` is true when the call was allowed and a failing sink blocked it (`AuditError`).
 * @internal
 */
export interface DecisionObserver {
  decided(record: AuditRecord, auditFailed: boolean): void;
}

/** Whether `value` is a promise (or any thenable): what a sink, a quota or {@link CapabilityGate.decide} may return. */
export function isPromise(value: unknown): value is Promise<unknown> {
  return typeof (value as { then?: unknown } | undefined)?.then === 'function';
}

/** Authorizes requests against a capability set, with approval and audit. */
export class CapabilityGate {
  readonly #caps: CapabilitySet;
  readonly #approver: Approver | undefined;
  readonly #audit: AuditSink | undefined;
  readonly #block: boolean;
  readonly #redact: CapabilityGateOptions['redact'];
  readonly #clock: () => number;
  readonly #onAuditError: CapabilityGateOptions['onAuditError'];

  constructor(options: CapabilityGateOptions) {
    this.#caps = options.capabilities;
    this.#approver = options.approver;
    this.#audit = options.audit;
    this.#block = (options.auditFailure ?? DEFAULT_AUDIT_FAILURE) === 'block';
    this.#redact = options.redact;
    this.#clock = options.clock ?? Date.now;
    this.#onAuditError = options.onAuditError;
  }

  /** The capability set this gate decides with. */
  get capabilities(): CapabilitySet {
    return this.#caps;
  }

  /**
   * Decides `request`. Returns the decision when the call may proceed; throws `PermissionDeniedError`
   * when it may not, or `AuditError` when the audit sink failed and `auditFailure` is `block`. Either error
   * carries the `decision` that was audited, so no caller rebuilds it from the error (issue 15).
   */
  authorize(request: AccessRequest): Promise<Decision> {
    try {
      return Promise.resolve(this.decide(request));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * {@link authorize} without a promise where none is needed: the decision itself when nothing had to be waited
   * for (no approver asked, no shared quota, a synchronous audit sink), which is nearly every call; a promise of
   * it otherwise. A refusal is thrown, or rejects the promise. The invocation pipeline decides through this, with
   * an `observer` told the record of the decision (built even without an audit sink when one is given).
   * @internal
   */
  decide(request: AccessRequest, observer?: DecisionObserver): Decision | Promise<Decision> {
    const decision = this.#caps.authorize(request.resource, request.action, request.context);
    if (decision.effect === 'ask') {
      return this.#approve(request, decision).then(([decided, approved]) =>
        this.#charge(request, decided, approved, observer),
      );
    }
    return this.#charge(request, decision, undefined, observer);
  }

  /** An allowed decision uses its shared quotas (which may turn it into a deny); then it is audited. */
  #charge(
    request: AccessRequest,
    decision: Decision,
    approved: boolean | undefined,
    observer: DecisionObserver | undefined,
  ): Decision | Promise<Decision> {
    if (!decision.allowed) return this.#record(request, decision, approved, observer);
    const charged = chargeSharedQuotas(decision, request.resource, request.action);
    return isPromise(charged)
      ? charged.then((d) => this.#record(request, d, approved, observer))
      : this.#record(request, charged, approved, observer);
  }

  /** Audits `decision` (a synchronous sink costs no promise and no extra turn), then concludes. */
  #record(
    request: AccessRequest,
    decision: Decision,
    approved: boolean | undefined,
    observer: DecisionObserver | undefined,
  ): Decision | Promise<Decision> {
    if (this.#audit === undefined && observer === undefined)
      return this.#conclude(request, decision, undefined);
    const written = this.#write(request, decision, approved, observer);
    return isPromise(written)
      ? written.then((failure) => this.#conclude(request, decision, failure))
      : this.#conclude(request, decision, written);
  }

  /** The decision, or the error a refusal or a blocking audit failure throws. */
  #conclude(request: AccessRequest, decision: Decision, failure: unknown): Decision {
    // A failing sink never turns a deny into an allow: the deny below wins either way.
    if (failure !== undefined && decision.allowed && this.#block) {
      throw new AuditError(
        `The audit sink failed, so the call to '${request.resource}' was blocked (auditFailure is 'block'). Fix the sink, or set auditFailure: 'continue'.`,
        { cause: failure, server: request.server, decision },
      );
    }
    if (!decision.allowed) {
      throw new PermissionDeniedError(
        {
          resource: request.resource,
          action: request.action,
          reason: decision.reason,
          rule: decision.rule,
          decision,
        },
        { server: request.server },
      );
    }
    return decision;
  }

  /**
   * Decides an authorized request again, for a call about to be sent after the set changed (its `revision`
   * moved while the call waited for a slot or a reconnect). Nothing is consumed and no approver is asked again.
   * When it no longer holds, the denial is audited and `PermissionDeniedError` thrown: the request is not sent.
   */
  async recheck(request: AccessRequest, observer?: DecisionObserver): Promise<Decision> {
    const { resource, action, context } = request;
    const now = recheckAuthorized(this.#caps, resource, action, context);
    if (now.allowed) return now;
    const decision: Decision = Object.freeze({
      ...now,
      reason: `The policy changed while the call waited to be sent: ${now.reason}`,
    });
    if (this.#audit !== undefined || observer !== undefined) {
      const written = this.#write(request, decision, undefined, observer);
      if (isPromise(written)) await written;
    }
    throw new PermissionDeniedError(
      { resource, action, reason: decision.reason, rule: decision.rule, decision },
      { server: request.server },
    );
  }

  async #approve(request: AccessRequest, decision: Decision): Promise<[Decision, boolean | undefined]> {
    const approver = this.#approver;
    const deny = (reason: string): Decision =>
      Object.freeze({
        allowed: false,
        effect: 'ask',
        ruleId: decision.ruleId,
        rule: decision.rule,
        reason,
        ...(decision.flow !== undefined ? { flow: decision.flow } : {}),
      });
    if (approver === undefined) {
      return [deny(`${decision.reason} No approver is configured, so ask is deny.`), undefined];
    }
    let answer: unknown;
    try {
      answer = await approver(Object.freeze({ ...request, decision }));
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return [deny(`${decision.reason} The approver failed (${why}), so the call is denied.`), false];
    }
    if (answer !== true) {
      return [deny(`${decision.reason} The approver did not allow it.`), false];
    }
    // Decide again: a revoke or deny added while the human was deciding still wins.
    return [authorizeApproved(this.#caps, request.resource, request.action, request.context), true];
  }

  /**
   * Writes the record, and tells `observer` once it is written; returns the failure, if any (a promise of it for an
   * asynchronous sink).
   */
  #write(
    request: AccessRequest,
    decision: Decision,
    approved: boolean | undefined,
    observer: DecisionObserver | undefined,
  ): unknown {
    const args = request.context?.args;
    let record: AuditRecord | undefined;
    try {
      record = Object.freeze({
        time: isoTime(request.context?.now ?? this.#clock()),
        agent: request.context?.agent,
        // Every key always present (undefined when not set), so every record has one shape: no spread per call.
        principal: request.context?.principal,
        policyRevision: this.#caps.policyRevision ?? String(this.#caps.revision),
        resource: request.resource,
        action: request.action,
        effect: decision.effect,
        allowed: decision.allowed,
        ruleId: decision.ruleId,
        reason: decision.reason,
        operatorHint: decision.operatorHint,
        server: request.server,
        tool: request.tool,
        argumentKeys: args === undefined || args === null ? NO_KEYS : argumentKeysOf(args),
        arguments: this.#redact !== undefined && args !== undefined ? this.#redact(args) : undefined,
        definitionHash: request.definitionHash,
        approved,
        // Issue 42: the labels and carried arguments a flow condition decided on (names, never data).
        flow: decision.flow,
        continuation: request.context?.continuation,
      });
      const pending = this.#audit?.write(record, request);
      if (!isPromise(pending)) {
        observer?.decided(record, false);
        return undefined;
      }
      const written = record;
      return pending.then(
        () => {
          observer?.decided(written, false);
          return undefined;
        },
        (err: unknown) => this.#failed(err, written, decision, observer),
      );
    } catch (err) {
      return this.#failed(err, record, decision, observer);
    }
  }

  #failed(
    err: unknown,
    record: AuditRecord | undefined,
    decision: Decision,
    observer: DecisionObserver | undefined,
  ): unknown {
    const failure = err ?? new Error('audit sink failed');
    if (!this.#block) this.#onAuditError?.(failure, record);
    // The record the sink could not take is still what was decided: the observer gets it, marked when it blocked.
    if (record !== undefined) observer?.decided(record, decision.allowed && this.#block);
    return failure;
  }
}
