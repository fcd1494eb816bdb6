/**
 * `AgentSession` (issue 4): the library's own session, built with {@link SessionInteropMixin}. It holds an
 * agent's model, capability set, MCP servers and native tools; `run()` runs the agent loop; `spawn()` makes a
 * sub-agent that shares its live connections under a derived (never wider) capability set.
 */
import { type Tracer, trace } from '@opentelemetry/api';
import { ConfigError } from '../errors.js';
import { labelsOfSet } from '../interop/flow-context.js';
import type { Logger } from '../interop/logger.js';
import type { MCPClientManagerOptions } from '../interop/manager.js';
import type { ModelProvider, ModelToolDefinition } from '../providers/types.js';
import { CapabilitySet } from '../security/capability-set.js';
import type { FlowState } from '../security/flow.js';
import { type AuditFailureMode, CapabilityGate } from '../security/gate.js';
import type { PolicyRule } from '../security/policy.js';
import type { Approver, AuditSink } from '../security/types.js';
import type { ToolCallResult } from '../tools/normalize.js';
import type { ToolWrapper } from '../tools/tool-wrapper.js';
import type { AgentSessionEventName, AgentSessionEvents, NativeToolHealth } from './events.js';
import { DEFAULT_MAX_PARALLEL_TOOL_CALLS, DEFAULT_MAX_TURNS, runLoop } from './loop.js';
import { interopState, SessionInteropMixin, type SessionInteropOptions } from './mixin.js';
import type { NativeTool } from './native-tool.js';
import { Session } from './session.js';
import { ATTR, TRACER_NAME } from './telemetry.js';
import { Toolbox } from './toolbox.js';
import type { AgentCallOptions, RunInput, RunOptions, RunResult, ToolDescriptor } from './types.js';

/** Agent names: they appear in audit records, conditions and span attributes. */
export const AGENT_NAME_RE = /^[A-Za-z0-9_.-]{1,64}$/;

/** Options of {@link AgentSession}. */
export interface AgentSessionOptions {
  /** 1-64 characters of `[A-Za-z0-9_.-]`; named in audit records and spans. */
  name: string;
  model: ModelProvider;
  /** What the agent may do. @default an empty set: everything is denied */
  capabilities?: CapabilitySet | undefined;
  /** Native tools, gated on `tool:{name}`. */
  tools?: readonly NativeTool[] | undefined;
  /** The system prompt. */
  instructions?: string | undefined;
  /** Model turns per run. @default DEFAULT_MAX_TURNS (10) */
  maxTurns?: number | undefined;
  /** Tool calls run at once when the model proposes several. @default DEFAULT_MAX_PARALLEL_TOOL_CALLS (8) */
  maxParallelToolCalls?: number | undefined;
  /** Servers and manager. `managerOptions.capabilities`, `audit`, `approver` and `agent` are set from here. */
  interop?: Omit<SessionInteropOptions, 'capabilities'> | undefined;
  /** Receives every capability decision (decisions also become span events). @default none */
  audit?: AuditSink | undefined;
  /** Decides `ask` rules. @default none: ask is deny */
  approver?: Approver | undefined;
  /** @default 'block' */
  auditFailure?: AuditFailureMode | undefined;
  /** @default `trace.getTracer('interlock')` */
  tracer?: Tracer | undefined;
  /** @default silent */
  logger?: Logger | undefined;
  /** Time source for audit records of native tools, ms since the epoch. @default `Date.now` */
  clock?: (() => number) | undefined;
  /** Native tool results longer than this are cut with a notice. @default 100 000 */
  maxResultChars?: number | undefined;
  /**
   * What the model is given of a tool result: `text`, one string (images and audio as placeholders such as
   * `[image: image/png, 1.2 KB]`); `content`, that string plus the result's images and audio, which the
   * provider sends as its API's image (and audio) parts, for vision- or audio-capable models.
   * @default 'text'
   */
  toolResults?: 'text' | 'content' | undefined;
}

/** Options of {@link AgentSession.spawn}. */
export interface SpawnOptions {
  name: string;
  /** The child's rules, derived from the parent's set: a rule the parent does not cover throws `PolicyError`. */
  capabilities: readonly PolicyRule[] | ((child: CapabilitySet) => void);
  /** @default the parent's */
  instructions?: string | undefined;
  /** @default the parent's */
  model?: ModelProvider | undefined;
  /** Native tools besides the parent's (which the child has too, under its own set). */
  tools?: readonly NativeTool[] | undefined;
  /** @default the parent's */
  maxTurns?: number | undefined;
}

interface Prepared {
  interop: SessionInteropOptions;
  capabilities: CapabilitySet;
  audit: AuditSink | undefined;
  tracer: Tracer;
}

function prepare(options: AgentSessionOptions, flow: FlowState | undefined): Prepared {
  if (typeof options?.name !== 'string' || !AGENT_NAME_RE.test(options.name)) {
    throw new ConfigError(
      `Invalid agent name ${JSON.stringify(options?.name)}: use 1-64 characters of A-Z, a-z, 0-9, '_', '.' and '-'.`,
      { issues: [{ path: 'name', message: 'invalid agent name' }] },
    );
  }
  if (options.model === undefined || typeof options.model.generate !== 'function') {
    throw new ConfigError(`Agent '${options.name}' has no model: pass a ModelProvider as model.`, {
      issues: [{ path: 'model', message: 'required' }],
    });
  }
  for (const [key, value] of [
    ['maxTurns', options.maxTurns],
    ['maxParallelToolCalls', options.maxParallelToolCalls],
  ] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 1 || value > 1000)) {
      throw new ConfigError(
        `Invalid ${key} ${String(value)} for agent '${options.name}': use an integer from 1 to 1000.`,
        {
          issues: [{ path: key, message: 'must be an integer from 1 to 1000' }],
        },
      );
    }
  }
  const tracer = options.tracer ?? trace.getTracer(TRACER_NAME);
  const capabilities = options.capabilities ?? new CapabilitySet();
  // Decisions become span events where they are made, once (issue 15): the invocation pipeline records each
  // gate's decision on the call's span (the manager's and a shared manager's view on `tools/call`, the native
  // tools' gate on `execute_tool`), so no audit sink adds a second event.
  const audit = options.audit;
  const managerOptions: MCPClientManagerOptions = {
    ...options.interop?.managerOptions,
    capabilities,
    audit,
    approver: options.approver,
    auditFailure: options.auditFailure,
    agent: options.name,
    tracer,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  };
  const interop = {
    ...options.interop,
    capabilities,
    managerOptions,
    ...(flow === undefined ? {} : { flow }),
  };
  return { interop, capabilities, audit, tracer };
}

const AgentSessionBase = SessionInteropMixin(Session);

/** An agent: a model, a capability set, MCP servers and native tools, and the loop that runs them. */
export class AgentSession extends AgentSessionBase {
  readonly name: string;
  readonly #options: AgentSessionOptions;
  readonly #capabilities: CapabilitySet;
  readonly #toolbox: Toolbox;
  readonly #tracer: Tracer;
  readonly #children = new Set<AgentSession>();
  readonly #runs = new Set<AbortController>();
  readonly #parent: string | undefined;
  #servers: Record<string, boolean> = {};

  constructor(options: AgentSessionOptions, internal: { parent?: string; flow?: FlowState } = {}) {
    const prepared = prepare(options, internal.flow);
    super({ interop: prepared.interop });
    this.name = options.name;
    this.#options = { ...options };
    this.#capabilities = prepared.capabilities;
    this.#tracer = prepared.tracer;
    this.#parent = internal.parent;
    const gate = new CapabilityGate({
      capabilities: prepared.capabilities,
      approver: options.approver,
      audit: prepared.audit,
      auditFailure: options.auditFailure,
      clock: options.clock,
    });
    const interop = interopState(this);
    this.#toolbox = new Toolbox({
      agent: options.name,
      mcp: interop.access,
      flow: interop.flow,
      // Native tools are labeled as the manager labels MCP tools: its resolver, else the agent's policy.
      flowLabels: prepared.interop.managerOptions?.flowLabels ?? labelsOfSet(prepared.capabilities),
      native: options.tools ?? [],
      capabilities: prepared.capabilities,
      gate,
      tracer: prepared.tracer,
      maxResultChars: options.maxResultChars,
      toolResults: options.toolResults,
    });
  }

  /** The agent's capability set (live: a revoke takes effect on the next call). */
  get capabilities(): CapabilitySet {
    return this.#capabilities;
  }

  get model(): ModelProvider {
    return this.#options.model;
  }

  /** Which of the agent's own servers connected when it started. */
  get servers(): Record<string, boolean> {
    return { ...this.#servers };
  }

  /** Every tool, MCP and native, as plain data. */
  get agentTools(): ToolDescriptor[] {
    return this.#toolbox.list();
  }

  /** The tools the model is shown: those the capability set could allow. */
  visibleTools(): ModelToolDefinition[] {
    return this.#toolbox.visible();
  }

  /**
   * Each native tool's call figures, by name: calls, errors, calls in flight, latency percentiles (as
   * `mcp.health()` reports per server for MCP tools) and the calls the gate denied. A sub-agent counts its own.
   */
  nativeToolHealth(): Record<string, NativeToolHealth> {
    return this.#toolbox.nativeCalls.health();
  }

  /** Listens to the agent's native tool call events (MCP tools' are on `mcp`). A throwing listener breaks nothing. */
  on<K extends AgentSessionEventName>(event: K, listener: (payload: AgentSessionEvents[K]) => void): this {
    this.#toolbox.nativeCalls.events.on(event, listener);
    return this;
  }

  /** Like {@link on}, for the next event only. */
  once<K extends AgentSessionEventName>(event: K, listener: (payload: AgentSessionEvents[K]) => void): this {
    this.#toolbox.nativeCalls.events.once(event, listener);
    return this;
  }

  /** Removes a listener added with {@link on} or {@link once}. */
  off<K extends AgentSessionEventName>(event: K, listener: (payload: AgentSessionEvents[K]) => void): this {
    this.#toolbox.nativeCalls.events.off(event, listener);
    return this;
  }

  /** The sub-agents spawned and not yet closed. */
  get children(): readonly AgentSession[] {
    return [...this.#children].filter((c) => !c.closed);
  }

  protected override async onStart(): Promise<void> {
    this.#servers = interopState(this).connected ? await this.connectInterop() : {};
    const logger = this.#options.logger;
    for (const [server, ok] of Object.entries(this.#servers)) {
      if (!ok) {
        const why = this.mcp.getConnection(server)?.error?.message ?? 'unknown error';
        logger?.warn(`agent '${this.name}': server '${server}' did not connect: ${why}`, { server });
      }
    }
  }

  /** Runs the agent on `input` (starting the session first if needed). See `RunResult`. */
  async run(input: RunInput, options: RunOptions = {}): Promise<RunResult> {
    await this.start();
    const controller = new AbortController();
    this.#runs.add(controller);
    const signal =
      options.signal === undefined ? controller.signal : AbortSignal.any([options.signal, controller.signal]);
    try {
      return await runLoop(
        {
          agent: this.name,
          model: this.#options.model,
          toolbox: this.#toolbox,
          instructions: this.#options.instructions,
          maxTurns: this.#options.maxTurns ?? DEFAULT_MAX_TURNS,
          maxParallelToolCalls: this.#options.maxParallelToolCalls ?? DEFAULT_MAX_PARALLEL_TOOL_CALLS,
          tracer: this.#tracer,
          attributes: this.#parent === undefined ? undefined : { [ATTR.PARENT_AGENT]: this.#parent },
        },
        input,
        { signal },
      );
    } finally {
      this.#runs.delete(controller);
    }
  }

  /** Calls a tool (MCP or native) through the same gate as the model's calls. Throws when denied or failed. */
  async callTool(
    name: string,
    args?: Record<string, unknown>,
    options?: AgentCallOptions,
  ): Promise<ToolCallResult> {
    await this.start();
    return this.#toolbox.call(name, args, options);
  }

  /** Registers tool schemas for `server` without a connection (offline tests); see `MCPClientManager.registerTools`. */
  registerTools(server: string, schemas: unknown): ToolWrapper[] {
    const added = this.mcp.registerTools(server, schemas);
    const access = interopState(this).access;
    return added.map((w) => access.getTool(w.name) ?? w);
  }

  /**
   * A sub-agent with a set derived from this one (it can never exceed it), sharing this agent's live
   * connections: no process is started. Its flow state is derived from this one's (issue 42): it starts with
   * every label this agent has seen, and what it reads enters this agent's state too. Closing this agent closes
   * its sub-agents first.
   */
  async spawn(options: SpawnOptions): Promise<AgentSession> {
    await this.start();
    const o = this.#options;
    const capabilities = this.#capabilities.derive(options.capabilities);
    const child = new AgentSession(
      {
        ...o,
        name: options.name,
        capabilities,
        model: options.model ?? o.model,
        instructions: options.instructions ?? o.instructions,
        maxTurns: options.maxTurns ?? o.maxTurns,
        tools: [...(o.tools ?? []), ...(options.tools ?? [])],
        tracer: this.#tracer,
        interop: { manager: this.mcp, managerOptions: o.interop?.managerOptions },
      },
      { parent: this.name, flow: this.flow.derive() },
    );
    for (const c of this.#children) if (c.closed) this.#children.delete(c);
    this.#children.add(child);
    await child.start();
    return child;
  }

  /** Cancels runs under way, closes sub-agents, then disconnects every server the agent connected. Idempotent. */
  override async close(): Promise<void> {
    for (const run of this.#runs) run.abort();
    await Promise.allSettled([...this.#children].map((c) => c.close()));
    await super.close();
  }
}
