/**
 * Errors shared by every area. This module is the one leaf everything may import: it depends on
 * nothing of ours. Every error Interlock throws extends {@link InterlockError} and carries a stable
 * string `code` (listed in {@link ErrorCode}); messages say what to do about it.
 *
 * Errors split by fault: a caller's mistake (bad config, bad arguments, a denied call) versus a system
 * fault (a server died, a timeout). Errors that a server sent over the wire (JSON-RPC errors) are kept
 * distinct as {@link ServerRequestError}, with the server's numeric code.
 */

/** Every error code Interlock throws. The reference page in the docs explains each one. */
export const ErrorCode = {
  /** A server config, config file or option is invalid. A caller's mistake. */
  INVALID_CONFIG: 'INVALID_CONFIG',
  /** A capability pattern or policy is malformed. A caller's mistake. */
  INVALID_POLICY: 'INVALID_POLICY',
  /** Connecting to a server failed (spawn error, refused connection, failed initialize, connect timeout). */
  CONNECTION_FAILED: 'CONNECTION_FAILED',
  /** The connection dropped while the request was in flight. */
  CONNECTION_LOST: 'CONNECTION_LOST',
  /** The server has no live connection (never connected, failed, closed, or only registered offline). */
  NOT_CONNECTED: 'NOT_CONNECTED',
  /** No tool has that exposed name. */
  TOOL_NOT_FOUND: 'TOOL_NOT_FOUND',
  /** The arguments do not match the tool's input schema. */
  INVALID_TOOL_INPUT: 'INVALID_TOOL_INPUT',
  /** A tool schema given to `registerTools` or received from a server is unusable. */
  INVALID_TOOL_SCHEMA: 'INVALID_TOOL_SCHEMA',
  /** A tool's result does not match its `outputSchema` (or has no `structuredContent` though it declares one). */
  INVALID_TOOL_OUTPUT: 'INVALID_TOOL_OUTPUT',
  /** The request did not complete within its timeout. */
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  /** The request was cancelled through its `AbortSignal`. */
  REQUEST_CANCELLED: 'REQUEST_CANCELLED',
  /** The server answered the request with a JSON-RPC error. */
  SERVER_ERROR: 'SERVER_ERROR',
  /** The capability set does not allow the call. */
  CAPABILITY_DENIED: 'CAPABILITY_DENIED',
  /** The tool's definition changed since it was pinned and the change is not approved. */
  TOOL_DEFINITION_CHANGED: 'TOOL_DEFINITION_CHANGED',
  /** The audit sink failed and `auditFailure` is `block`. */
  AUDIT_FAILED: 'AUDIT_FAILED',
  /** The manager (or the thing that owns the resource) is closed. */
  CLOSED: 'CLOSED',
  /** The server's call queue is full (`maxConcurrentCalls` + `maxQueuedCalls`). */
  OVERLOADED: 'OVERLOADED',
  /** A model API answered with an error status or an unreadable body. */
  MODEL_REQUEST_FAILED: 'MODEL_REQUEST_FAILED',
  /** The SSRF guard refused an address, host or scheme (the manager's `network` policy). */
  NETWORK_DENIED: 'NETWORK_DENIED',
  /** The shared state store (Redis) could not be reached or answered with an error. A system fault. */
  STATE_UNAVAILABLE: 'STATE_UNAVAILABLE',
  /**
   * A document read from the shared state store is invalid (not JSON, fails its schema, a revision that is not a
   * safe integer or goes backwards): it is not used, and what depends on it fails closed.
   */
  STATE_INVALID: 'STATE_INVALID',
  /**
   * A shared policy revision was written, but some live processes did not apply it within the bound; they refuse
   * every call until they do. The error names them.
   */
  POLICY_NOT_APPLIED: 'POLICY_NOT_APPLIED',
  /**
   * A policy was not published because publishing requires a reviewed diff (`state.policy.requireReview`) and no
   * review hash was given, or the one given is not the hash of this policy's diff against the recording (stale or
   * wrong). Nothing was published.
   */
  POLICY_NOT_REVIEWED: 'POLICY_NOT_REVIEWED',
  /**
   * Authorization with a server's OAuth authorization server failed for a reason a retry will not fix: the
   * authorization response named the wrong issuer (RFC 9207), the server's authorization server changed, a
   * cross-app access grant was refused, or the server refused a newly issued token too.
   */
  AUTH_FAILED: 'AUTH_FAILED',
  /**
   * A skill file a server served does not match the skill's entry (its digest, size or frontmatter), is not listed
   * in it, or cannot be verified at all (a `"dynamic"` skill): it was not used. The server's fault.
   */
  SKILL_VERIFICATION_FAILED: 'SKILL_VERIFICATION_FAILED',
  /**
   * The gateway process that holds a caller's parked call (another replica) is gone, cannot be reached through the
   * fleet's store, or did not finish the round in time (issue 41). The caller calls the tool again.
   */
  REPLICA_UNAVAILABLE: 'REPLICA_UNAVAILABLE',
  /**
   * A call to an upstream server that takes the caller's identity (token exchange or a per-caller ID-JAG, issue 41)
   * was not sent: the caller has no identity to exchange, or the authorization server refused the exchange.
   */
  UPSTREAM_IDENTITY_REFUSED: 'UPSTREAM_IDENTITY_REFUSED',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Options every Interlock error accepts. */
export interface InterlockErrorOptions {
  /** The underlying error, if any. */
  cause?: unknown;
  /** The server this error concerns, if any. */
  server?: string | undefined;
}

/** Base of every error Interlock throws. Check `code` rather than the class when crossing package copies. */
export class InterlockError extends Error {
  readonly code: ErrorCode;
  readonly server: string | undefined;

  constructor(code: ErrorCode, message: string, options: InterlockErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.server = options.server;
  }
}

/** One problem found while validating a config or policy: where, and what is wrong. */
export interface ConfigIssue {
  /** Path of the field, e.g. `mcpServers.fs.args[1]`. */
  path: string;
  message: string;
}

/** A config (server config, config file, option object) is invalid. Code `INVALID_CONFIG`. */
export class ConfigError extends InterlockError {
  readonly issues: readonly ConfigIssue[];
  readonly file: string | undefined;

  constructor(
    message: string,
    options: InterlockErrorOptions & { issues?: readonly ConfigIssue[]; file?: string } = {},
  ) {
    super(ErrorCode.INVALID_CONFIG, message, options);
    this.issues = Object.freeze([...(options.issues ?? [])]);
    this.file = options.file;
  }
}

/** A capability pattern, rule or policy is malformed. Code `INVALID_POLICY`. */
export class PolicyError extends InterlockError {
  readonly pattern: string | undefined;

  constructor(message: string, options: InterlockErrorOptions & { pattern?: string } = {}) {
    super(ErrorCode.INVALID_POLICY, message, options);
    this.pattern = options.pattern;
  }
}

/** Connecting to a server failed. Code `CONNECTION_FAILED`. */
export class ConnectionError extends InterlockError {
  constructor(message: string, options: InterlockErrorOptions = {}) {
    super(ErrorCode.CONNECTION_FAILED, message, options);
  }
}

/** The connection dropped while a request was in flight. Code `CONNECTION_LOST`. */
export class ConnectionLostError extends InterlockError {
  constructor(message: string, options: InterlockErrorOptions = {}) {
    super(ErrorCode.CONNECTION_LOST, message, options);
  }
}

/** The server has no live connection. Code `NOT_CONNECTED`. */
export class NotConnectedError extends InterlockError {
  constructor(message: string, options: InterlockErrorOptions = {}) {
    super(ErrorCode.NOT_CONNECTED, message, options);
  }
}

/** No tool has that name. Code `TOOL_NOT_FOUND`; `suggestions` lists the closest existing names. */
export class ToolNotFoundError extends InterlockError {
  readonly toolName: string;
  readonly suggestions: readonly string[];

  constructor(toolName: string, suggestions: readonly string[], options: InterlockErrorOptions = {}) {
    const hint =
      suggestions.length > 0 ? ` Did you mean ${suggestions.map((s) => `'${s}'`).join(', ')}?` : '';
    super(ErrorCode.TOOL_NOT_FOUND, `No tool named '${toolName}'.${hint}`, options);
    this.toolName = toolName;
    this.suggestions = Object.freeze([...suggestions]);
  }
}

/** One argument that failed validation against a tool's input schema. */
export interface ToolInputIssue {
  /** JSON Pointer-like path of the failing field, e.g. `/path` or `/options/depth`; `` for the root. */
  field: string;
  message: string;
}

/** The arguments do not match the tool's input schema. Code `INVALID_TOOL_INPUT`. */
export class ToolInputError extends InterlockError {
  readonly toolName: string;
  readonly issues: readonly ToolInputIssue[];

  constructor(toolName: string, issues: readonly ToolInputIssue[], options: InterlockErrorOptions = {}) {
    const list = issues.map((i) => `${i.field === '' ? '(arguments)' : i.field}: ${i.message}`).join('; ');
    super(
      ErrorCode.INVALID_TOOL_INPUT,
      `Invalid arguments for tool '${toolName}': ${list}. Fix these fields and call again.`,
      options,
    );
    this.toolName = toolName;
    this.issues = Object.freeze([...issues]);
  }
}

/** A tool schema is unusable. Code `INVALID_TOOL_SCHEMA`. */
export class ToolSchemaError extends InterlockError {
  constructor(message: string, options: InterlockErrorOptions = {}) {
    super(ErrorCode.INVALID_TOOL_SCHEMA, message, options);
  }
}

/**
 * A tool's result does not keep the promise of its `outputSchema`: `structuredContent` is missing or does not
 * match (MCP tools, "Output Schema": servers MUST provide conforming results). The server's fault, not the
 * caller's. Code `INVALID_TOOL_OUTPUT`; `issues` name the paths inside `structuredContent` that fail.
 */
export class ToolOutputError extends InterlockError {
  readonly toolName: string;
  readonly issues: readonly ToolInputIssue[];

  constructor(toolName: string, issues: readonly ToolInputIssue[], options: InterlockErrorOptions = {}) {
    const list = issues
      .map((i) => `${i.field === '' ? '(structuredContent)' : i.field}: ${i.message}`)
      .join('; ');
    super(
      ErrorCode.INVALID_TOOL_OUTPUT,
      `Tool '${toolName}' returned a result that does not match its outputSchema: ${list}. The server broke its own contract; report it to the server's authors, or call it without relying on structuredContent.`,
      options,
    );
    this.toolName = toolName;
    this.issues = Object.freeze([...issues]);
  }
}

/** The request did not complete in time. Code `REQUEST_TIMEOUT`. */
export class RequestTimeoutError extends InterlockError {
  readonly timeoutMs: number;

  constructor(message: string, timeoutMs: number, options: InterlockErrorOptions = {}) {
    super(ErrorCode.REQUEST_TIMEOUT, message, options);
    this.timeoutMs = timeoutMs;
  }
}

/** The request was cancelled by its `AbortSignal`. Code `REQUEST_CANCELLED`. */
export class RequestCancelledError extends InterlockError {
  constructor(message: string, options: InterlockErrorOptions = {}) {
    super(ErrorCode.REQUEST_CANCELLED, message, options);
  }
}

/** The server answered with a JSON-RPC error. Code `SERVER_ERROR`; `rpcCode` is the server's number. */
export class ServerRequestError extends InterlockError {
  readonly rpcCode: number;
  readonly data: unknown;

  constructor(message: string, rpcCode: number, data: unknown, options: InterlockErrorOptions = {}) {
    super(ErrorCode.SERVER_ERROR, message, options);
    this.rpcCode = rpcCode;
    this.data = data;
  }
}

/** What decided a denial: the rule, when a rule decided it. */
export interface DecidingRule {
  id: string;
  pattern: string;
  effect: 'allow' | 'deny' | 'ask';
  description?: string | undefined;
}

/**
 * The information flow a decision was made on (issue 42), when a flow condition of the deciding rule took part:
 * names only, never data.
 */
export interface DecisionFlow {
  /** The session labels the condition named that the session had, sorted. */
  readonly labels: readonly string[];
  /** What the arguments carried of the labels the condition named: argument name, label, source resource. */
  readonly carried: readonly {
    readonly argument: string;
    readonly label: string;
    readonly source: string;
  }[];
  /** The target labels the condition named that the target had (when it named any). */
  readonly target?: readonly string[] | undefined;
  /** True when the session's provenance index was full, so a carried fragment may have gone unfound. */
  readonly truncated?: boolean | undefined;
}

/** The effect of a decision; `default-deny` when no rule matched. */
export type DecisionEffect = 'allow' | 'deny' | 'ask' | 'default-deny';

/**
 * The answer to "may `action` be done on `resource`?". Defined here, beside {@link DecidingRule}, so the errors
 * that carry it need nothing of the security area; `mcp-interlock/security` exports it.
 */
export interface Decision {
  readonly allowed: boolean;
  readonly effect: DecisionEffect;
  /** Id of the deciding rule; absent for `default-deny`. */
  readonly ruleId?: string | undefined;
  /** The deciding rule; absent for `default-deny`. */
  readonly rule?: DecidingRule | undefined;
  /**
   * Why, fit to show to a model or a remote caller: the refusal and its reason, never how to widen the policy
   * (issue 39).
   */
  readonly reason: string;
  /**
   * For a denial: what the operator could change to allow it (a rule to add). For the people who own the policy
   * (the CLI, logs, the audit trail), never for a model or a remote caller. Absent when there is no such fix.
   */
  readonly operatorHint?: string | undefined;
  /** The information flow the decision was made on, when a flow condition of the deciding rule took part. */
  readonly flow?: DecisionFlow | undefined;
}

/**
 * The capability set does not allow the call. Code `CAPABILITY_DENIED`. The `message` says what was refused and
 * why, and is safe to hand to a model or a remote caller; `operatorHint` holds the fix, for the operator only.
 */
export class PermissionDeniedError extends InterlockError {
  readonly resource: string;
  readonly action: string;
  readonly reason: string;
  readonly rule: DecidingRule | undefined;
  /**
   * The gate's decision, as it was recorded (issue 15): `deny`, `default-deny`, or an `ask` the approver or its
   * absence refused. Absent when the refusal was not the policy's (a fixed safety rule).
   */
  readonly decision: Decision | undefined;
  /**
   * What the operator could change to allow the call (from the decision, when it has one). Never part of
   * `message`: a model or remote caller gets the refusal and the reason only (issue 39).
   */
  readonly operatorHint: string | undefined;

  constructor(
    details: {
      resource: string;
      action: string;
      reason: string;
      rule?: DecidingRule | undefined;
      decision?: Decision | undefined;
      operatorHint?: string | undefined;
    },
    options: InterlockErrorOptions = {},
  ) {
    super(
      ErrorCode.CAPABILITY_DENIED,
      `Permission denied: '${details.action}' on '${details.resource}'. ${details.reason}`,
      options,
    );
    this.resource = details.resource;
    this.action = details.action;
    this.reason = details.reason;
    this.rule = details.rule;
    this.decision = details.decision;
    this.operatorHint = details.operatorHint ?? details.decision?.operatorHint;
  }
}

/**
 * Interlock refused a request a server made of it (elicitation, sampling, roots) while serving a call: its
 * policy denied it, or the request broke a fixed safety rule (an unsafe URL, tools the client never declared).
 * Code `CAPABILITY_DENIED`. The refusal is the client's, not the server's, and the message says so.
 */
export class ServerRequestRefusedError extends PermissionDeniedError {
  /** `elicitation`, `sampling` or `roots`. */
  readonly kind: string;
  /** True when the capability policy decided; false for a fixed safety rule. */
  readonly byPolicy: boolean;

  constructor(
    details: {
      server: string;
      kind: string;
      /** The resource the request was decided on: `resourceFor.serverRequest(server, kind)` (src/security). */
      resource: string;
      reason: string;
      byPolicy: boolean;
      rule?: DecidingRule | undefined;
    },
    options: InterlockErrorOptions = {},
  ) {
    const { server, kind, reason, byPolicy } = details;
    super(
      { resource: details.resource, action: 'request', reason, rule: details.rule },
      { server, ...options },
    );
    this.kind = kind;
    this.byPolicy = byPolicy;
    this.message = byPolicy
      ? `Interlock's policy refused the ${kind} request server '${server}' made during this call (the refusal is the client's, not the server's): ${reason}`
      : `Interlock refused the ${kind} request server '${server}' made during this call: ${reason}`;
  }
}

/** A pinned tool's definition changed and the change is not approved. Code `TOOL_DEFINITION_CHANGED`. */
export class ToolDefinitionChangedError extends InterlockError {
  readonly toolName: string;
  readonly pinnedHash: string;
  readonly currentHash: string;
  /** How to review and approve the change: for the operator, never in `message` (which may reach a model). */
  readonly operatorHint: string;

  constructor(
    toolName: string,
    pinnedHash: string,
    currentHash: string,
    options: InterlockErrorOptions & { message?: string | undefined } = {},
  ) {
    super(
      ErrorCode.TOOL_DEFINITION_CHANGED,
      options.message ??
        `Tool '${toolName}' changed its definition since it was pinned (${pinnedHash.slice(0, 12)} -> ${currentHash.slice(0, 12)}); calls to it are blocked until the change is reviewed.`,
      options,
    );
    this.toolName = toolName;
    this.pinnedHash = pinnedHash;
    this.currentHash = currentHash;
    this.operatorHint = `Review the change (manager.blockedTools or \`interlock pins\` shows a diff) and approve what you reviewed with manager.approveToolChange('${toolName}', '${currentHash.slice(0, 12)}'), or set onToolChange for the server.`;
  }
}

/** The audit sink failed and the policy says a call must not proceed unaudited. Code `AUDIT_FAILED`. */
export class AuditError extends InterlockError {
  /** The policy's decision the failed record held, when the gate blocked an allowed call (issue 15). */
  readonly decision: Decision | undefined;

  constructor(message: string, options: InterlockErrorOptions & { decision?: Decision | undefined } = {}) {
    super(ErrorCode.AUDIT_FAILED, message, options);
    this.decision = options.decision;
  }
}

/** The owner of the resource is closed. Code `CLOSED`. */
export class ClosedError extends InterlockError {
  constructor(message: string, options: InterlockErrorOptions = {}) {
    super(ErrorCode.CLOSED, message, options);
  }
}

/** The server already has as many calls in flight and queued as allowed. Code `OVERLOADED`. */
export class OverloadedError extends InterlockError {
  constructor(message: string, options: InterlockErrorOptions = {}) {
    super(ErrorCode.OVERLOADED, message, options);
  }
}

/** Why {@link AuthError} was thrown. */
export type AuthFailureReason =
  /** The authorization response's `iss` is missing, unexpected or names another issuer (RFC 9207 mix-up defense). */
  | 'issuer_mismatch'
  /** The authorization server's metadata names another issuer than the one it was discovered at (RFC 8414 3.3). */
  | 'metadata_issuer_mismatch'
  /** Credentials are bound to one authorization server and the server now names another. */
  | 'authorization_server_changed'
  /** The identity provider or the authorization server refused the cross-app access (ID-JAG) grant. */
  | 'cross_app_access_refused'
  /** The server answered 401 again after a new token was obtained for it. */
  | 'token_refused'
  /** The sign-in redirect carried an OAuth error (e.g. `access_denied`) or no code, or cannot be finished. */
  | 'sign_in_failed'
  /** The sign-in redirect carried another `state` than the one sent (RFC 6749 10.12: possible CSRF). */
  | 'state_mismatch'
  /** A sign-in in a browser is needed, and nothing is configured to open one. */
  | 'sign_in_required'
  /** The stored credentials (the token file, or the shared OAuth state) cannot be read. */
  | 'credentials_unreadable'
  /** The authorization server did not revoke a token (RFC 7009); the reason is a status or an error code. */
  | 'revocation_failed';

/** Authorization failed in a way a retry will not fix. Code `AUTH_FAILED`; `reason` says which way. */
export class AuthError extends InterlockError {
  readonly reason: AuthFailureReason;

  constructor(reason: AuthFailureReason, message: string, options: InterlockErrorOptions = {}) {
    super(ErrorCode.AUTH_FAILED, message, options);
    this.reason = reason;
  }
}

/**
 * Publishing needs a reviewed diff and none matched, or the policy's tests failed (issue 40). Code
 * `POLICY_NOT_REVIEWED`. `reason` says whether no hash was given, it did not match, or a policy test failed; `operatorHint` says how to get one. The expected hash is never in the error:
 * only running the diff, and reading it, yields it.
 */
export class PolicyReviewError extends InterlockError {
  readonly reason: 'missing' | 'mismatch' | 'tests-failed';
  readonly operatorHint: string;

  constructor(
    reason: 'missing' | 'mismatch' | 'tests-failed',
    message: string,
    options: InterlockErrorOptions & { operatorHint: string },
  ) {
    super(ErrorCode.POLICY_NOT_REVIEWED, message, options);
    this.reason = reason;
    this.operatorHint = options.operatorHint;
  }
}

/** Why {@link SkillIntegrityError} was thrown. */
export type SkillIntegrityReason =
  /** The file's SHA-256 digest differs from the one its skill entry lists. */
  | 'digest'
  /** The file's length differs from the size its skill entry lists. */
  | 'size'
  /** The `SKILL.md` frontmatter differs from the entry's, or cannot be read. */
  | 'frontmatter'
  /** The file is not listed in the skill's entry. */
  | 'unlisted'
  /** The skill lists its files as `"dynamic"`: there is no digest to verify them against. */
  | 'unverifiable';

/**
 * A skill file failed verification against its skill entry (SEP-2640, "Integrity and verification"), so it was not
 * used: no content of it is handed on. Code `SKILL_VERIFICATION_FAILED`. The `message` names the skill and the file
 * only (it may reach a model); `operatorHint` holds what differs (both digests, the sizes or the frontmatter fields)
 * and what to do.
 */
export class SkillIntegrityError extends InterlockError {
  readonly reason: SkillIntegrityReason;
  /** The skill's `SKILL.md` URI. */
  readonly skill: string;
  /** The file that failed. */
  readonly uri: string;
  /** What differs and what to do: for the operator, never in `message`. */
  readonly operatorHint: string;

  constructor(
    reason: SkillIntegrityReason,
    details: { skill: string; uri: string; operatorHint: string },
    options: InterlockErrorOptions = {},
  ) {
    const where = options.server === undefined ? '' : ` from server '${options.server}'`;
    super(
      ErrorCode.SKILL_VERIFICATION_FAILED,
      `Skill file ${details.uri}${where} failed verification against the skill's entry (${reason}) and was not used.`,
      options,
    );
    this.reason = reason;
    this.skill = details.skill;
    this.uri = details.uri;
    this.operatorHint = details.operatorHint;
  }
}

/** Why {@link UpstreamIdentityError} was thrown. */
export type UpstreamIdentityReason =
  /** The call has no caller identity to exchange (in-process use, the stdio gateway, an API key caller). */
  | 'no_caller_identity'
  /** The authorization server (or the identity provider) refused the exchange or the grant. */
  | 'exchange_refused'
  /** The authorization server could not be reached or answered with something that is not a token. */
  | 'exchange_failed';

/**
 * The caller's identity could not be carried to an upstream server (issue 41), so the upstream was not called. Code
 * `UPSTREAM_IDENTITY_REFUSED`. The `message` may reach the caller and its model: it names the server only, never a
 * token nor how to widen anything; `operatorHint` says what to configure.
 */
export class UpstreamIdentityError extends InterlockError {
  readonly reason: UpstreamIdentityReason;
  /** What the operator could check or configure: for the operator, never in `message`. */
  readonly operatorHint: string;

  constructor(
    reason: UpstreamIdentityReason,
    message: string,
    options: InterlockErrorOptions & { operatorHint: string },
  ) {
    super(ErrorCode.UPSTREAM_IDENTITY_REFUSED, message, options);
    this.reason = reason;
    this.operatorHint = options.operatorHint;
  }
}

/** True when `value` is an Interlock error, optionally with the given code. Works across package copies. */
export function isInterlockError(value: unknown, code?: ErrorCode): value is InterlockError {
  if (!(value instanceof Error)) return false;
  const c = (value as { code?: unknown }).code;
  if (typeof c !== 'string' || !(Object.values(ErrorCode) as string[]).includes(c)) return false;
  return code === undefined || c === code;
}
