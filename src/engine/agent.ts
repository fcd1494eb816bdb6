/**
 * `Agent`: what `engine.createAgent()` returns. A thin face over an {@link AgentSession}: the same loop, gate
 * and lifecycle, with the names the issue gives (`tools` lists MCP and native tools alike).
 */
import type { MCPClientManager } from '../interop/manager.js';
import type { ModelProvider, ModelToolDefinition } from '../providers/types.js';
import type { CapabilitySet } from '../security/capability-set.js';
import type { FlowState } from '../security/flow.js';
import type { AgentSession, SpawnOptions } from '../session/agent-session.js';
import type { AgentSessionEventName, AgentSessionEvents, NativeToolHealth } from '../session/events.js';
import type { AgentCallOptions, RunInput, RunOptions, RunResult, ToolDescriptor } from '../session/types.js';
import type { ToolCallResult } from '../tools/normalize.js';
import type { ToolWrapper } from '../tools/tool-wrapper.js';

/** An agent: run it, call its tools, spawn sub-agents, close it. */
export class Agent implements AsyncDisposable {
  readonly #session: AgentSession;
  readonly #parent: Agent | undefined;

  /** Wraps a session (one you built yourself, or the engine's). */
  constructor(session: AgentSession, parent?: Agent) {
    this.#session = session;
    this.#parent = parent;
  }

  get name(): string {
    return this.#session.name;
  }

  /** The agent's capability set (live). A sub-agent's is derived from its parent's. */
  get capabilities(): CapabilitySet {
    return this.#session.capabilities;
  }

  get model(): ModelProvider {
    return this.#session.model;
  }

  /**
   * What has entered the agent's context, with which labels (issue 42): every tool, resource and prompt result it
   * read, recorded with its source's labels; flow conditions decide on it. A sub-agent's starts with its parent's,
   * and what it reads enters its parent's too.
   */
  get flow(): FlowState {
    return this.#session.flow;
  }

  /** The manager holding the agent's connections (a sub-agent shares its parent's). */
  get mcp(): MCPClientManager {
    return this.#session.mcp;
  }

  /** Which of the agent's servers connected. */
  get servers(): Record<string, boolean> {
    return this.#session.servers;
  }

  /** Every tool, MCP and native, as plain data. */
  get tools(): ToolDescriptor[] {
    return this.#session.agentTools;
  }

  /** The tools the model is shown: those the capability set could allow. */
  visibleTools(): ModelToolDefinition[] {
    return this.#session.visibleTools();
  }

  /** Each native tool's call figures, by name (MCP tools' are per server in `mcp.health()`). */
  nativeToolHealth(): Record<string, NativeToolHealth> {
    return this.#session.nativeToolHealth();
  }

  /** Listens to the agent's native tool call events (MCP tools' are on `mcp`). */
  on<K extends AgentSessionEventName>(event: K, listener: (payload: AgentSessionEvents[K]) => void): this {
    this.#session.on(event, listener);
    return this;
  }

  /** Like {@link on}, for the next event only. */
  once<K extends AgentSessionEventName>(event: K, listener: (payload: AgentSessionEvents[K]) => void): this {
    this.#session.once(event, listener);
    return this;
  }

  /** Removes a listener added with {@link on} or {@link once}. */
  off<K extends AgentSessionEventName>(event: K, listener: (payload: AgentSessionEvents[K]) => void): this {
    this.#session.off(event, listener);
    return this;
  }

  /** The session underneath. */
  get session(): AgentSession {
    return this.#session;
  }

  /** The agent this one was spawned from. */
  get parent(): Agent | undefined {
    return this.#parent;
  }

  get closed(): boolean {
    return this.#session.closed;
  }

  /** Runs the agent loop on `input`. Tool errors and denials go to the model; see `RunResult.steps`. */
  run(input: RunInput, options?: RunOptions): Promise<RunResult> {
    return this.#session.run(input, options);
  }

  /** Calls a tool through the agent's gate. Throws `CAPABILITY_DENIED` and other coded errors. */
  callTool(
    name: string,
    args?: Record<string, unknown>,
    options?: AgentCallOptions,
  ): Promise<ToolCallResult> {
    return this.#session.callTool(name, args, options);
  }

  /** Registers a server's tool schemas offline (no connection), for tests. */
  registerTools(server: string, schemas: unknown): ToolWrapper[] {
    return this.#session.registerTools(server, schemas);
  }

  /** A sub-agent under a derived capability set, sharing this agent's connections. */
  async spawn(options: SpawnOptions): Promise<Agent> {
    return new Agent(await this.#session.spawn(options), this);
  }

  /** Closes sub-agents, then the agent's servers. Idempotent. */
  close(): Promise<void> {
    return this.#session.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
