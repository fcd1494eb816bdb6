/**
 * `MCPClientManager` connects many MCP servers in parallel and exposes their tools as `ToolWrapper`s named
 * `mcp__{server}__{tool}`. Every call passes one gate, the capability check on `mcp:{server}:{tool}` /
 * `execute`, before anything is sent: there is no other path to a server.
 */

import type { GetPromptResult, ReadResourceResult } from '@modelcontextprotocol/client';
import { type MCPServerConfigInput, parseServerConfig, parseServerConfigs } from '../config/servers.js';
import { ClosedError, ConfigError, ToolDefinitionChangedError, ToolNotFoundError } from '../errors.js';
import { lazyModule } from '../lazy.js';
import { type HttpClient, httpClientFrom } from '../net/http.js';
import { type Tracer, trace } from '../otel.js';
import type { SkillEntry } from '../protocol/skills.js';
import type { ClientIdentity } from '../protocol/transport.js';
import { CapabilitySet } from '../security/capability-set.js';
import type { FlowState } from '../security/flow.js';
import { CapabilityGate } from '../security/gate.js';
import { resourceFor } from '../security/pattern.js';
import { PinStore } from '../security/pinning.js';
import type { CheckContext } from '../security/types.js';
import { DEFAULT_MAX_TOOL_NAME_LENGTH } from '../tools/names.js';
import { DEFAULT_MAX_RESULT_CHARS, type ToolCallResult } from '../tools/normalize.js';
import { parseToolSchemas } from '../tools/schema.js';
import type { ToolInvoker, ToolWrapper } from '../tools/tool-wrapper.js';
import type { CallPathDeps } from './call-path.js';
import type { CapabilityView, CapabilityViewOptions, ResourceRequestOptions } from './capability-view.js';
import { ToolCatalog } from './catalog.js';
import { type BlockedToolChange, CatalogReporter } from './catalog-reporter.js';
import type { ServerConnectionInfo } from './connection.js';
import { ConnectionRegistry, type ServerHealth } from './connection-registry.js';
import { type MCPManagerEvents, TypedEvents } from './events.js';
import { type FlowLabelResolver, labelsOfSet, type McpCallOptions, ServerLabelBook } from './flow-context.js';
import { type Logger, silentLogger } from './logger.js';
import { checkManagerOptions, type MCPClientManagerOptions } from './manager-options.js';
import type { ServerAuthFactory } from './open-client.js';
import type { RequestFor, RequestPathDeps, RequestPathOptions } from './request-path.js';
import { logAt, type ServerLogSupport } from './server-logs.js';
import { InFlightCalls } from './server-request-trace.js';
import { type ServerRequestSupport, serverRequestSupport } from './server-requests.js';
import type { SkillFile, SkillInfo, SkillRead, SkillReadOptions } from './skills.js';

export type { CapabilityView, CapabilityViewOptions, ResourceRequestOptions } from './capability-view.js';
// Sessions and the engine import the options type from here, where it was defined before issue 15's split.
export type { MCPClientManagerOptions } from './manager-options.js';

/** The package version reported to servers. */
export const CLIENT_VERSION = '0.1.0';

// Issue 15, import time: the tool-call path (with the task and input-round code it pulls in) and the resource and
// prompt path load when a server first connects or a call is first made, not with `mcp-interlock/interop`.
const callPath = lazyModule(() => import('./call-path.js'));
const requestPath = lazyModule(() => import('./request-path.js'));
const skillPath = lazyModule(() => import('./skills.js'));

function throughRequestPath<T>(run: (path: typeof import('./request-path.js')) => Promise<T>): Promise<T> {
  const path = requestPath.loaded;
  return path === undefined ? requestPath.load().then(run) : run(path);
}

/** Connects MCP servers in parallel and gates, runs and normalizes their tool calls. */
export class MCPClientManager implements ToolInvoker {
  readonly #connections: ConnectionRegistry;
  readonly #catalog: ToolCatalog;
  readonly #reporter: CatalogReporter;
  readonly #events = new TypedEvents<MCPManagerEvents>();
  readonly #gate: CapabilityGate;
  readonly #capabilities: CapabilitySet;
  readonly #logger: Logger;
  readonly #identity: ClientIdentity;
  readonly #http: HttpClient;
  readonly #ownsHttp: boolean;
  readonly #maxResultChars: number;
  readonly #agent: string | undefined;
  readonly #flow: FlowState;
  readonly #flowLabels: FlowLabelResolver | undefined;
  readonly #serverLabels = new ServerLabelBook();
  readonly #pins: PinStore;
  readonly #tracer: Tracer;
  readonly #serverAuth: ServerAuthFactory | undefined;
  readonly #serverRequests: ServerRequestSupport | undefined;
  readonly #serverLogs: ServerLogSupport;
  readonly #callPath: CallPathDeps;
  readonly #requestPath: RequestPathDeps;
  readonly #unwatchPins: () => void;
  #callIds = 0;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(options: MCPClientManagerOptions = {}) {
    checkManagerOptions(options);
    this.#capabilities = options.capabilities ?? new CapabilitySet();
    this.#gate = new CapabilityGate({
      capabilities: this.#capabilities,
      approver: options.approver,
      audit: options.audit,
      auditFailure: options.auditFailure ?? 'block',
    });
    this.#logger = options.logger ?? silentLogger;
    this.#identity = options.clientInfo ?? { name: 'interlock', version: CLIENT_VERSION };
    const http = httpClientFrom(options);
    this.#ownsHttp = http.owned;
    this.#http = http.client;
    this.#serverAuth = options.serverAuth;
    this.#maxResultChars = options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS;
    this.#agent = options.agent;
    // Issue 42: without a resolver of its own, the manager labels by its set's policy (while it tracks flow).
    this.#flowLabels = options.flowLabels;
    const flowLabels = options.flowLabels ?? labelsOfSet(this.#capabilities, this.#serverLabels);
    this.#flow = options.flow ?? this.#capabilities.flowLabels.createFlowState();
    this.#pins = options.pins ?? new PinStore();
    // Issue 16: a pin another process wrote (an approval, a first sighting) re-checks this manager's tools.
    this.#unwatchPins = this.#pins.onChange((change) => {
      if (change.origin === 'shared') this.#reporter.pinChanged(change.server, change.tool);
    });
    this.#tracer = options.tracer ?? trace.getTracer('interlock', CLIENT_VERSION);
    this.#serverLogs = {
      level: options.logLevel,
      // Masked before it is cut (issue 38), so the entry's text is already safe to log and emit.
      mask: (text) => this.#http.redactor.mask(text),
      onLog: (entry) => {
        const line = `[${entry.server} log${entry.logger === undefined ? '' : ` ${entry.logger}`}] ${entry.text}`;
        logAt(this.#logger, entry.level)(line, { server: entry.server });
        this.#events.emit('server_log', () => ({ ...entry }));
      },
    };
    const inFlight = new InFlightCalls();
    this.#serverRequests = serverRequestSupport(
      {
        onElicitation: options.onElicitation,
        onUrlElicitation: options.onUrlElicitation,
        onSampling: options.onSampling,
        samplingWithTools: options.samplingWithTools,
        roots: options.roots,
        maxRequestsPerRound: options.maxInputRequestsPerRound,
      },
      {
        // Answers to server requests pass the invocation pipeline: decided by the manager's gate, recorded once.
        gate: this.#gate,
        agent: this.#agent,
        principal: options.principal,
        tracer: this.#tracer,
        inFlight,
      },
    );
    this.#catalog = new ToolCatalog(this, options.maxToolNameLength ?? DEFAULT_MAX_TOOL_NAME_LENGTH);
    this.#callPath = {
      tracer: this.#tracer,
      gate: this.#gate,
      catalog: this.#catalog,
      events: this.#events,
      maxResultChars: this.#maxResultChars,
      agent: this.#agent,
      principal: options.principal,
      flow: this.#flow,
      flowLabels,
      argumentLimits: options.argumentLimits,
      redactor: this.#http.redactor,
      answerServerRequest: this.#serverRequests?.answer,
      ...(this.#serverRequests !== undefined && { inFlight }),
      logLevel: options.logLevel,
      nextCallId: () => ++this.#callIds,
      relistTools: (server) => this.#reporter.refresh(server),
    };
    this.#reporter = new CatalogReporter({
      catalog: this.#catalog,
      pins: this.#pins,
      events: this.#events,
      logger: this.#logger,
      configOf: (server) => this.#connections.get(server)?.config,
      live: (server) => this.#connections.live(server),
      isCurrent: (connection) => this.#connections.isCurrent(connection),
    });
    this.#connections = new ConnectionRegistry({
      http: this.#http,
      identity: this.#identity,
      tracer: this.#tracer,
      serverAuth: this.#serverAuth,
      serverRequests: this.#serverRequests,
      serverLogs: this.#serverLogs,
      logger: this.#logger,
      events: this.#events,
      onConnected: (connection) => {
        this.#reporter.mergeLive(connection, false);
        return this.#catalog.serverTools(connection.name).length;
      },
      onReconnected: (connection) => {
        this.#reporter.mergeLive(connection);
        return this.#catalog.serverTools(connection.name).length;
      },
      onToolListChanged: (server) => this.#reporter.scheduleRefresh(server),
      onDiscarded: (server) => this.#catalog.removeServer(server),
    });
    this.#requestPath = {
      tracer: this.#tracer,
      redactor: this.#http.redactor,
      events: this.#events,
      flowLabels,
      connection: (server) => this.#connections.get(server),
      nextCallId: () => ++this.#callIds,
    };
  }

  /** Where tool definitions are pinned. */
  get pins(): PinStore {
    return this.#pins;
  }

  /** The capability set calls are checked against. */
  get capabilities(): CapabilitySet {
    return this.#capabilities;
  }

  /**
   * The manager's own flow state (issue 42): what calls that name no `flow` are decided in and record into. A
   * session that owns the manager uses it as its own; give each agent sharing a manager a state of its own.
   */
  get flow(): FlowState {
    return this.#flow;
  }

  // ---- events -------------------------------------------------------------------------------------------

  on<K extends keyof MCPManagerEvents & string>(
    event: K,
    listener: (payload: MCPManagerEvents[K]) => void,
  ): this {
    this.#events.on(event, listener);
    return this;
  }
  once<K extends keyof MCPManagerEvents & string>(
    event: K,
    listener: (payload: MCPManagerEvents[K]) => void,
  ): this {
    this.#events.once(event, listener);
    return this;
  }
  off<K extends keyof MCPManagerEvents & string>(
    event: K,
    listener: (payload: MCPManagerEvents[K]) => void,
  ): this {
    this.#events.off(event, listener);
    return this;
  }

  // ---- connections --------------------------------------------------------------------------------------

  /**
   * Connects every server in parallel, each bounded by its own `connectTimeoutMs`. Never throws for a server
   * that fails to connect: its error stays on `getConnection(name).error`. Throws `ConfigError` before
   * connecting anything when a config is invalid or a name is taken.
   */
  async connectAll(configs: readonly MCPServerConfigInput[]): Promise<Record<string, boolean>> {
    this.#assertOpen();
    const parsed = parseServerConfigs(configs);
    callPath.preload();
    for (const config of parsed) this.#serverLabels.add(config);
    return this.#connections.connectAll(parsed);
  }

  /** Connects one server. Rejects with `ConnectionError` when it fails (the connection keeps the error). */
  async connectServer(config: MCPServerConfigInput): Promise<ServerConnectionInfo> {
    this.#assertOpen();
    const parsed = parseServerConfig(config);
    this.#connections.assertNameFree(parsed.name);
    if (!parsed.enabled) {
      throw new ConfigError(`Server '${parsed.name}' is disabled (enabled: false); enable it to connect.`, {
        server: parsed.name,
      });
    }
    callPath.preload();
    this.#serverLabels.add(parsed);
    return this.#connections.connect(parsed);
  }

  /** Closes one server and removes its tools. Safe to call for an unknown or closed server. */
  async disconnectServer(name: string): Promise<void> {
    const connection = this.#connections.remove(name);
    if (connection === undefined) return;
    const removed = this.#catalog.removeServer(name);
    await connection.close();
    if (removed.length > 0)
      this.#events.emit('tools_changed', { server: name, added: [], removed, changed: [] });
    this.#events.emit('disconnected', { server: name, reason: 'closed' });
  }

  /** Closes every server with `Promise.allSettled`. Idempotent; the manager stays usable. */
  async disconnectAll(): Promise<void> {
    await Promise.allSettled(this.#connections.values().map((c) => this.disconnectServer(c.name)));
  }

  /** Disconnects everything and releases the HTTP dispatcher. Safe to call twice. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      this.#unwatchPins();
      await this.#connections.abortConnects(new ClosedError('The manager was closed while connecting.'));
      await this.disconnectAll();
      if (this.#ownsHttp) await this.#http.close();
      this.#events.removeAllListeners();
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #assertOpen(): void {
    if (this.#closed) throw new ClosedError('This MCPClientManager is closed; create a new one.');
  }

  /** The connection of `name`, whatever its state. */
  getConnection(name: string): ServerConnectionInfo | undefined {
    return this.#connections.get(name);
  }

  /** Every connection, whatever its state. */
  get connections(): ServerConnectionInfo[] {
    return this.#connections.values();
  }

  // ---- tools --------------------------------------------------------------------------------------------

  /** Every exposed tool (live and offline). */
  get tools(): ToolWrapper[] {
    return this.#catalog.wrappers();
  }

  /** The tool with that exposed name, or `undefined`. */
  getTool(name: string): ToolWrapper | undefined {
    return this.#catalog.get(name)?.wrapper;
  }

  /**
   * The tools the capability set could allow for `context` (and that are not blocked by a changed pin), so a
   * model is not shown tools it can never call. Each call is still checked when it is made.
   */
  visibleTools(context?: CheckContext): ToolWrapper[] {
    return this.#visibleTools(this.#capabilities, context);
  }

  #visibleTools(capabilities: CapabilitySet, context: CheckContext | undefined): ToolWrapper[] {
    return this.#reporter.visibleTools(capabilities, context);
  }

  /** Tools whose definition changed since it was pinned and whose calls are blocked until approved. */
  get blockedTools(): BlockedToolChange[] {
    return this.#reporter.blockedTools();
  }

  /**
   * Approves a changed tool definition, bound to what was reviewed: `hash` is the `currentHash` shown by
   * {@link blockedTools} (at least its first 12 hex digits). Pins that definition and unblocks calls. Returns
   * false when the tool was not blocked; throws `TOOL_DEFINITION_CHANGED` when the definition awaiting approval
   * is not the one reviewed (it changed again). Save `manager.pins` afterwards for the approval to survive a
   * restart.
   */
  approveToolChange(name: string, hash: string): boolean {
    return this.#reporter.approve(name, hash);
  }

  /**
   * Registers tool schemas for `server` without a connection (tests, schema checks, offline development).
   * Calling one raises `NOT_CONNECTED`. When the server connects for real, its live tools replace these.
   */
  registerTools(server: string, schemas: unknown): ToolWrapper[] {
    this.#assertOpen();
    const name = parseServerConfig({ name: server, transport: 'stdio', command: 'offline' }).name;
    const tools = parseToolSchemas(name, schemas);
    if (this.#connections.get(name)?.state === 'ready') {
      throw new ConfigError(
        `Server '${name}' is connected; its live tools cannot be replaced by offline schemas.`,
        {
          server: name,
        },
      );
    }
    return this.#reporter.mergeOffline(name, tools);
  }

  /** Calls a tool by exposed name and resolves to its result as a string. */
  executeTool(name: string, args?: Record<string, unknown>, options?: McpCallOptions): Promise<string> {
    // Not an async function: a suspended async frame per call costs more than the one promise `then` makes.
    return this.callTool(name, args, options).then(textOf);
  }

  /**
   * Calls a tool by exposed name: resolves the name, checks the capability set (nothing is sent when denied),
   * validates the arguments against the tool's schema, sends the call with the server's original tool name,
   * and normalizes the result.
   */
  callTool(
    name: string,
    args?: Record<string, unknown>,
    options: McpCallOptions = {},
  ): Promise<ToolCallResult> {
    // Not an async function (one promise and one turn less per call); a throw still becomes a rejection.
    try {
      return this.#call(this.#callPath, name, args, options);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  #call(
    deps: CallPathDeps,
    name: string,
    args: Record<string, unknown> | undefined,
    options: McpCallOptions,
  ): Promise<ToolCallResult> {
    const entry = this.#catalog.get(name);
    if (entry === undefined)
      return Promise.reject(new ToolNotFoundError(name, this.#catalog.closestNames(name)));
    if (entry.blocked !== undefined) {
      return Promise.reject(
        new ToolDefinitionChangedError(name, entry.blocked.pinned, entry.blocked.current, {
          server: entry.wrapper.server,
        }),
      );
    }
    const path = callPath.loaded;
    // The first call of a manager that never connected: load the path, then decide it afresh.
    if (path === undefined) return callPath.load().then(() => this.#call(deps, name, args, options));
    const connection = this.#connections.get(entry.wrapper.server);
    return path.runToolCall(deps, entry, connection, args ?? {}, options);
  }

  /**
   * A view of this manager for a sub-agent: the same live connections (no new processes), with every call
   * checked against `capabilities`, which must be derived from the manager's set (so it can never exceed it).
   * Calls through the view are checked and audited once, by the view's gate.
   */
  withCapabilities(capabilities: CapabilitySet, options: CapabilityViewOptions = {}): CapabilityView {
    if (!capabilities.derivesFrom(this.#capabilities)) {
      throw new ConfigError(
        "withCapabilities needs a set derived from the manager's own (capabilities.derive(...)), so it can never exceed it.",
      );
    }
    const gate = new CapabilityGate({
      capabilities,
      approver: options.approver,
      audit: options.audit,
      auditFailure: options.auditFailure ?? 'block',
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    });
    const agent = options.agent ?? this.#agent;
    const flow = options.flow ?? this.#flow;
    const flowLabels = this.#flowLabels ?? labelsOfSet(capabilities, this.#serverLabels);
    const deps: CallPathDeps = { ...this.#callPath, gate, agent, flow, flowLabels };
    return {
      capabilities,
      flow,
      visibleTools: (context) => this.#visibleTools(capabilities, context),
      readResource: (server, uri, opts) => this.#readResource(gate, agent, flow, server, uri, opts ?? {}),
      getPrompt: (server, name, args, opts) =>
        this.#getPrompt(gate, agent, flow, server, name, args ?? {}, opts ?? {}),
      readSkill: (server, skill, opts) => this.#readSkill(gate, agent, flow, server, skill, opts ?? {}),
      callTool: (name, args, opts) => this.#call(deps, name, args, opts ?? {}),
      executeTool: async (name, args, opts) => (await this.#call(deps, name, args, opts ?? {})).text,
      authorizeServerRequest: (server, kind, args, opts) =>
        gate.authorize({
          resource: resourceFor.serverRequest(server, kind),
          action: 'request',
          context: { args, agent, principal: opts?.principal },
          server,
        }),
    };
  }

  /** Per-server health: state, since, reconnects, last error, calls in flight and queued, counts, latency. */
  health(): Record<string, ServerHealth> {
    return this.#connections.health();
  }

  /**
   * Tries to reconnect `name` now (after it `failed`, or to skip a pending backoff delay). Resolves true when the
   * server is ready again.
   */
  async reconnectServer(name: string): Promise<boolean> {
    this.#assertOpen();
    return this.#connections.reconnect(name);
  }

  /** Reads a resource, gated on `mcp-resource:{server}:{uri}` / `read`. */
  readResource(
    server: string,
    uri: string,
    options: ResourceRequestOptions = {},
  ): Promise<ReadResourceResult> {
    return this.#readResource(this.#gate, this.#agent, this.#flow, server, uri, options);
  }

  /** Gets a prompt, gated on `mcp-prompt:{server}:{name}` / `get`. */
  getPrompt(
    server: string,
    name: string,
    args: Record<string, string> = {},
    options: ResourceRequestOptions = {},
  ): Promise<GetPromptResult> {
    return this.#getPrompt(this.#gate, this.#agent, this.#flow, server, name, args, options);
  }

  #readResource(
    gate: CapabilityGate,
    agent: string | undefined,
    flow: FlowState,
    server: string,
    uri: string,
    options: ResourceRequestOptions,
  ): Promise<ReadResourceResult> {
    const context = this.#requestFor(agent, flow, options);
    return throughRequestPath((path) =>
      path.readResourceThrough(this.#requestPath, gate, context, server, uri, options),
    );
  }

  #getPrompt(
    gate: CapabilityGate,
    agent: string | undefined,
    flow: FlowState,
    server: string,
    name: string,
    args: Record<string, string>,
    options: ResourceRequestOptions,
  ): Promise<GetPromptResult> {
    const context = this.#requestFor(agent, flow, options);
    return throughRequestPath((path) =>
      path.getPromptThrough(this.#requestPath, gate, context, server, name, args, options),
    );
  }

  /** Who a resource read or prompt get is for, and its flow state: the request's own, else the manager's or view's. */
  #requestFor(agent: string | undefined, flow: FlowState, options: ResourceRequestOptions): RequestFor {
    return {
      agent: options.agent ?? agent,
      principal: options.principal ?? this.#callPath.principal,
      flow: options.flow ?? flow,
    };
  }

  /** The skills `server` serves (Skills extension, SEP-2640), each with the resource its reads are decided on. */
  listSkills(server: string, options: RequestPathOptions = {}): Promise<SkillInfo[]> {
    return skillPath
      .load()
      .then((path) => path.listSkillsThrough(this.#requestPath, this.#gate, server, options));
  }

  /**
   * Reads a file of a skill (`SKILL.md` unless `options.file`), gated on `mcp:{server}:skill:{name}` / `read`, and
   * verified against the skill's entry (digest, size, frontmatter) before it is returned: a mismatch throws
   * `SKILL_VERIFICATION_FAILED`.
   */
  readSkill(server: string, skill: SkillEntry | string, options: SkillReadOptions = {}): Promise<SkillFile> {
    return this.#readSkill(this.#gate, this.#agent, this.#flow, server, skill, options);
  }

  #readSkill(
    gate: CapabilityGate,
    agent: string | undefined,
    flow: FlowState,
    ...[server, skill, options]: SkillRead
  ): Promise<SkillFile> {
    const who = { agent, principal: this.#callPath.principal, flow: options.flow ?? flow };
    return skillPath
      .load()
      .then((path) => path.readSkillThrough(this.#requestPath, gate, who, server, skill, options));
  }

  /** Fetches `server`'s tool list again and merges it; wrappers handed out before stay valid. */
  refreshTools(server: string): Promise<void> {
    return this.#reporter.refresh(server);
  }
}

function textOf(result: ToolCallResult): string {
  return result.text;
}
