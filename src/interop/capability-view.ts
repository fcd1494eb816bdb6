/**
 * What a capability view offers (issue 4, "Sub-agents"; `MCPClientManager.withCapabilities`): the manager's live
 * connections, every call decided by another capability set, and the options of the requests it makes.
 */
import type { GetPromptResult, ReadResourceResult } from '@modelcontextprotocol/client';
import type { SkillEntry } from '../protocol/skills.js';
import type { CapabilitySet } from '../security/capability-set.js';
import type { FlowState } from '../security/flow.js';
import type { Approver, AuditSink, CheckContext, Decision } from '../security/types.js';
import type { ToolCallResult } from '../tools/normalize.js';
import type { ToolInvoker, ToolWrapper } from '../tools/tool-wrapper.js';
import type { McpCallOptions } from './flow-context.js';
import type { ServerRequestKind } from './server-requests.js';
import type { SkillFile, SkillReadOptions } from './skills.js';

/** Options of a resource read or prompt request. */
export interface ResourceRequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** The agent on whose behalf it is made (conditions, audit). @default the manager's or view's agent */
  agent?: string;
  /** Who the agent acts for (audit, shared quotas). @default the manager's principal */
  principal?: string;
  /** The flow state it is decided in and its content recorded into (issue 42). @default the manager's or view's */
  flow?: FlowState;
}

/** Options of {@link MCPClientManager.withCapabilities}. */
export interface CapabilityViewOptions {
  approver?: Approver | undefined;
  audit?: AuditSink | undefined;
  auditFailure?: 'block' | 'continue' | undefined;
  agent?: string | undefined;
  /** The gate's clock (for audit times). */
  clock?: (() => number) | undefined;
  /** The flow state of calls through the view that name none (a sub-agent's). @default the manager's `flow` */
  flow?: FlowState | undefined;
}

/**
 * Calls through a manager's live connections, checked against a derived capability set (see
 * {@link MCPClientManager.withCapabilities}). Wrappers for a model must call through the view, not the manager.
 */
export interface CapabilityView extends ToolInvoker {
  readonly capabilities: CapabilitySet;
  /** The flow state of calls through the view that name none. */
  readonly flow: FlowState;
  /** The tools the view's set could allow (as {@link MCPClientManager.visibleTools} for the manager's set). */
  visibleTools(context?: CheckContext): ToolWrapper[];
  /** {@link MCPClientManager.readResource}, decided by the view's set. */
  readResource(server: string, uri: string, options?: ResourceRequestOptions): Promise<ReadResourceResult>;
  /** {@link MCPClientManager.getPrompt}, decided by the view's set. */
  getPrompt(
    server: string,
    name: string,
    args?: Record<string, string>,
    options?: ResourceRequestOptions,
  ): Promise<GetPromptResult>;
  callTool(name: string, args?: Record<string, unknown>, options?: McpCallOptions): Promise<ToolCallResult>;
  executeTool(name: string, args?: Record<string, unknown>, options?: McpCallOptions): Promise<string>;
  /** {@link MCPClientManager.readSkill}, decided by the view's set. */
  readSkill(server: string, skill: SkillEntry | string, options?: SkillReadOptions): Promise<SkillFile>;
  /**
   * Decides a request `server` made (`mcp:{server}:{kind}` / `request`, `args` for conditions) by the view's set,
   * audited: resolves with the decision, or throws `PermissionDeniedError`. For a gateway relaying the request on.
   */
  authorizeServerRequest(
    server: string,
    kind: ServerRequestKind,
    args: Record<string, unknown>,
    options?: { principal?: string | undefined },
  ): Promise<Decision>;
}
