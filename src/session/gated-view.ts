/**
 * A view of a shared manager under a narrower capability set (issue 4, "Sub-agents"): a sub-agent uses its
 * parent's live connections, and every call is checked once, against the sub-agent's own set, which is
 * derived from the manager's (a derived set's allow holds only where its parent allows at check time).
 * The view hands out its own wrappers, so a model holding one cannot bypass the narrower set.
 */
import type { CapabilityView, MCPClientManager } from '../interop/manager.js';
import type { CapabilitySet } from '../security/capability-set.js';
import type { AuditFailureMode } from '../security/gate.js';
import { resourceFor } from '../security/pattern.js';
import type { Approver, AuditSink, CheckContext } from '../security/types.js';
import type { ToolCallResult } from '../tools/normalize.js';
import {
  type ToolCallOptions,
  type ToolDefinition,
  type ToolInvoker,
  ToolWrapper,
} from '../tools/tool-wrapper.js';

/** What a session needs of MCP: the tools, the ones a model may see, and a gated call. The manager fits it. */
export interface McpToolAccess {
  readonly tools: ToolWrapper[];
  getTool(name: string): ToolWrapper | undefined;
  visibleTools(context?: CheckContext): ToolWrapper[];
  callTool(name: string, args?: Record<string, unknown>, options?: ToolCallOptions): Promise<ToolCallResult>;
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
}

/** A manager's tools, checked against another capability set before the manager's own gate. */
export class GatedToolView implements McpToolAccess, ToolInvoker {
  readonly #manager: MCPClientManager;
  readonly #capabilities: CapabilitySet;
  readonly #view: CapabilityView;
  readonly #wrappers = new Map<string, { definition: ToolDefinition; wrapper: ToolWrapper }>();

  constructor(manager: MCPClientManager, options: GatedToolViewOptions) {
    this.#manager = manager;
    this.#capabilities = options.capabilities;
    this.#view = manager.withCapabilities(options.capabilities, {
      approver: options.approver,
      audit: options.audit,
      auditFailure: options.auditFailure,
      agent: options.agent,
      clock: options.clock,
    });
  }

  /** The set checked first. */
  get capabilities(): CapabilitySet {
    return this.#capabilities;
  }

  /** The manager's tools, as wrappers whose calls go through this view. */
  get tools(): ToolWrapper[] {
    return this.#manager.tools.map((w) => this.#wrap(w));
  }

  getTool(name: string): ToolWrapper | undefined {
    const w = this.#manager.getTool(name);
    return w === undefined ? undefined : this.#wrap(w);
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
    options: ToolCallOptions = {},
  ): Promise<ToolCallResult> {
    return this.#view.callTool(name, args, options);
  }

  async executeTool(
    name: string,
    args?: Record<string, unknown>,
    options?: ToolCallOptions,
  ): Promise<string> {
    return (await this.callTool(name, args, options)).text;
  }

  #wrap(w: ToolWrapper): ToolWrapper {
    const hit = this.#wrappers.get(w.name);
    if (hit !== undefined && hit.definition === w.definition) return hit.wrapper;
    const wrapper = new ToolWrapper(w.definition, this);
    this.#wrappers.set(w.name, { definition: w.definition, wrapper });
    return wrapper;
  }
}
