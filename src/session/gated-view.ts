/**
 * A view of a shared manager under a narrower capability set (issue 4, "Sub-agents"): a sub-agent uses its
 * parent's live connections, and every call is checked once, against the sub-agent's own set, which is
 * derived from the manager's (a derived set's allow holds only where its parent allows at check time).
 * The view hands out its own wrappers, so a model holding one cannot bypass the narrower set, and its calls are
 * made in the view's flow state (issue 42), the sub-agent's, unless a call names another.
 */
import type { McpCallOptions } from '../interop/flow-context.js';
import type { CapabilityView, MCPClientManager } from '../interop/manager.js';
import type { CapabilitySet } from '../security/capability-set.js';
import type { FlowState } from '../security/flow.js';
import type { AuditFailureMode } from '../security/gate.js';
import { resourceFor } from '../security/pattern.js';
import type { Approver, AuditSink, CheckContext } from '../security/types.js';
import type { ToolCallResult } from '../tools/normalize.js';
import { type ToolDefinition, type ToolInvoker, ToolWrapper } from '../tools/tool-wrapper.js';

/** What a session needs of MCP: the tools, the ones a model may see, and a gated call. The manager fits it. */
export interface McpToolAccess {
  readonly tools: ToolWrapper[];
  getTool(name: string): ToolWrapper | undefined;
  visibleTools(context?: CheckContext): ToolWrapper[];
  callTool(name: string, args?: Record<string, unknown>, options?: McpCallOptions): Promise<ToolCallResult>;
}

/** Options of {@link GatedToolView}. */
export interface GatedToolViewOptions {
  /** The view's set; derive it from the manager's so it can never exceed it. */
  capabilities: CapabilitySet;
  approver?: Approver | undefined;
  audit?: AuditSink | undefined;
  auditFailure?: AuditFailureMode | undefined;
  /** The agent named in conditions and audit records when a call names none. */
  agent?: string | undefined;
  clock?: (() => number) | undefined;
  /** The flow state of the calls that name none (the sub-agent's). @default the manager's `flow` */
  flow?: FlowState | undefined;
}

/** The wrappers a view hands out: one per tool, calling through the view, made again when the tool changes. */
class ViewWrappers {
  readonly #invoker: ToolInvoker;
  readonly #wrappers = new Map<string, { definition: ToolDefinition; wrapper: ToolWrapper }>();

  constructor(invoker: ToolInvoker) {
    this.#invoker = invoker;
  }

  wrap(w: ToolWrapper): ToolWrapper {
    const hit = this.#wrappers.get(w.name);
    if (hit !== undefined && hit.definition === w.definition) return hit.wrapper;
    const wrapper = new ToolWrapper(w.definition, this.#invoker);
    this.#wrappers.set(w.name, { definition: w.definition, wrapper });
    return wrapper;
  }
}

/** A manager's tools, checked against another capability set before the manager's own gate. */
export class GatedToolView implements McpToolAccess, ToolInvoker {
  readonly #manager: MCPClientManager;
  readonly #capabilities: CapabilitySet;
  readonly #view: CapabilityView;
  readonly #wrappers = new ViewWrappers(this);

  constructor(manager: MCPClientManager, options: GatedToolViewOptions) {
    this.#manager = manager;
    this.#capabilities = options.capabilities;
    this.#view = manager.withCapabilities(options.capabilities, {
      approver: options.approver,
      audit: options.audit,
      auditFailure: options.auditFailure,
      agent: options.agent,
      clock: options.clock,
      flow: options.flow,
    });
  }

  /** The set checked first. */
  get capabilities(): CapabilitySet {
    return this.#capabilities;
  }

  /** The flow state of the calls that name none. */
  get flow(): FlowState {
    return this.#view.flow;
  }

  /** The manager's tools, as wrappers whose calls go through this view. */
  get tools(): ToolWrapper[] {
    return this.#manager.tools.map((w) => this.#wrappers.wrap(w));
  }

  getTool(name: string): ToolWrapper | undefined {
    const w = this.#manager.getTool(name);
    return w === undefined ? undefined : this.#wrappers.wrap(w);
  }

  /** The tools both this view's set and the manager's could allow, minus those blocked by a changed pin. */
  visibleTools(context?: CheckContext): ToolWrapper[] {
    const names = new Set(this.#manager.visibleTools(context).map((w) => w.name));
    return this.tools.filter(
      (w) =>
        names.has(w.name) &&
        this.#capabilities.couldAllow(resourceFor.tool(w.server, w.tool), 'execute', {
          ...context,
          annotations: w.annotations,
        }),
    );
  }

  callTool(
    name: string,
    args?: Record<string, unknown>,
    options: McpCallOptions = {},
  ): Promise<ToolCallResult> {
    return this.#view.callTool(name, args, options);
  }

  async executeTool(name: string, args?: Record<string, unknown>, options?: McpCallOptions): Promise<string> {
    return (await this.callTool(name, args, options)).text;
  }
}

/**
 * Another's tools (a shared manager's, under its own gate) with calls made in a session's flow state unless a
 * call names another (issue 42): a session on a shared manager never records into, nor is decided by, the
 * manager's own state or another session's. Internal to the session area.
 */
export class FlowBoundTools implements McpToolAccess, ToolInvoker {
  readonly #inner: McpToolAccess;
  readonly #wrappers = new ViewWrappers(this);
  /** The session's flow state. */
  readonly flow: FlowState;

  constructor(inner: McpToolAccess, flow: FlowState) {
    this.#inner = inner;
    this.flow = flow;
  }

  get tools(): ToolWrapper[] {
    return this.#inner.tools.map((w) => this.#wrappers.wrap(w));
  }

  getTool(name: string): ToolWrapper | undefined {
    const w = this.#inner.getTool(name);
    return w === undefined ? undefined : this.#wrappers.wrap(w);
  }

  visibleTools(context?: CheckContext): ToolWrapper[] {
    return this.#inner.visibleTools(context).map((w) => this.#wrappers.wrap(w));
  }

  callTool(
    name: string,
    args?: Record<string, unknown>,
    options: McpCallOptions = {},
  ): Promise<ToolCallResult> {
    return this.#inner.callTool(
      name,
      args,
      options.flow === undefined ? { ...options, flow: this.flow } : options,
    );
  }
}
