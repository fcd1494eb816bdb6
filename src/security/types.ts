/**
 * The contract between the capability model and whatever enforces it (the interop manager, the engine).
 * Depends on nothing of ours but the shared errors.
 */
import type { Decision, DecisionEffect, DecisionFlow } from '../errors.js';
import type { FlowState } from './flow.js';

export type { Decision, DecisionEffect, DecisionFlow };

/** The three rule effects. */
export type RuleEffect = 'allow' | 'deny' | 'ask';

/** Untrusted hints a server gives about a tool (MCP `ToolAnnotations`). May deny more, never allow more. */
export interface ToolHints {
  readOnlyHint?: boolean | undefined;
  destructiveHint?: boolean | undefined;
  idempotentHint?: boolean | undefined;
  openWorldHint?: boolean | undefined;
}

/** What a condition may look at. Every field is optional; a condition that needs a missing one fails closed. */
export interface CheckContext {
  /** The call's arguments (read only). */
  readonly args?: Readonly<Record<string, unknown>> | undefined;
  /** The agent on whose behalf the call is made. */
  readonly agent?: string | undefined;
  /**
   * Who the agent acts for (a tenant, a user, a downstream client), set by the application. Shared quotas count
   * per rule, agent and principal.
   */
  readonly principal?: string | undefined;
  /** The groups of the agent or principal (a token's groups claim), for Cedar policies (`principal in Group`). */
  readonly groups?: readonly string[] | undefined;
  /** The OAuth scopes of the agent or principal, for Cedar policies (`principal.scopes.contains(...)`). */
  readonly scopes?: readonly string[] | undefined;
  /** Milliseconds since the epoch; defaults to the set's clock. */
  readonly now?: number | undefined;
  /** The tool's annotations, untrusted. */
  readonly annotations?: ToolHints | undefined;
  /**
   * What the session has seen (issue 42): its labels and the provenance of their content. Flow conditions read it;
   * without it a flow condition fails closed (a deny on it applies, an allow does not).
   */
  readonly flow?: FlowState | undefined;
  /** The labels of what is called or read (the target), resolved from the policy and the project file. */
  readonly labels?: readonly string[] | undefined;
  /**
   * The input round a call continues (issue 41): its caller answered the server's questions and the call is
   * decided again before it goes on. Audited as the record's `continuation`.
   */
  readonly continuation?: number | undefined;
}

/** What the gate is asked to authorize. */
export interface AccessRequest {
  readonly resource: string;
  readonly action: string;
  readonly context?: CheckContext | undefined;
  /** Server and original tool name, for audit. */
  readonly server?: string | undefined;
  readonly tool?: string | undefined;
  /** SHA-256 of the tool's canonical definition, for audit. */
  readonly definitionHash?: string | undefined;
}

/** Asked when an `ask` rule decides; resolves `true` to allow the call once. */
export type Approver = (request: AccessRequest & { decision: Decision }) => Promise<boolean> | boolean;

/** One audited decision. Argument values never appear unless a redacting serializer was configured. */
export interface AuditRecord {
  /** ISO 8601 time of the decision. */
  readonly time: string;
  readonly agent?: string | undefined;
  /** The principal the call was made for, when the application set one. */
  readonly principal?: string | undefined;
  /**
   * The policy that decided: the version of a shared policy (`policyRevision`), else the set's local revision
   * number as a string.
   */
  readonly policyRevision?: string | undefined;
  readonly resource: string;
  readonly action: string;
  /** The final effect after approval: `allow` when an ask was approved. */
  readonly effect: DecisionEffect;
  readonly allowed: boolean;
  readonly ruleId?: string | undefined;
  readonly reason: string;
  /** For a denial: what the operator could change to allow it (the decision's `operatorHint`). */
  readonly operatorHint?: string | undefined;
  readonly server?: string | undefined;
  readonly tool?: string | undefined;
  /** The names of the arguments, sorted; never their values. */
  readonly argumentKeys: readonly string[];
  /** Redacted arguments, only when a serializer was given. */
  readonly arguments?: unknown;
  readonly definitionHash?: string | undefined;
  /** True when an `ask` rule was decided by the approver. */
  readonly approved?: boolean | undefined;
  /**
   * When a flow condition of the deciding rule took part (issue 42): the session labels it named that the session
   * had, and which argument carried which label from which source. Names only, never data.
   */
  readonly flow?: DecisionFlow | undefined;
  /** When the call continues after its caller answered the server's questions: which input round it continues. */
  readonly continuation?: number | undefined;
}

/** Where audit records go. `write` may be sync or async; a throw or rejection is a sink failure. */
export interface AuditSink {
  /**
   * Records one decision. `request` is what was decided, with the call's raw arguments and the tool's annotations
   * (issue 40, replay before rollout): a sink that keeps anything from it must redact it first, as the decision
   * recording does. Sinks that only store `record` ignore it.
   */
  write(record: AuditRecord, request?: AccessRequest): void | Promise<void>;
  close?(): Promise<void>;
}

/**
 * Where quotas are counted when they must hold across processes: a `StateStore` from `mcp-interlock/state`
 * (Redis) fits. `consume` takes one unit of `key` if fewer than `limit` were taken in the current window.
 */
export interface QuotaCounter {
  consume(
    key: string,
    limit: number,
    windowMs?: number,
  ): Promise<{ readonly allowed: boolean; readonly used: number }>;
}
