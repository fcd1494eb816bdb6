/**
 * `MCPClientManager` connects many MCP servers in parallel and exposes their tools as `ToolWrapper`s named
 * `mcp__{server}__{tool}`. Every call passes one gate, the capability check on `mcp:{server}:{tool}` /
 * `execute`, before anything is sent: there is no other path to a server.
 */

import { setMaxListeners } from 'node:events';
import type {
  Client,
  FetchLike,
  GetPromptResult,
  LoggingLevel,
  ReadResourceResult,
} from '@modelcontextprotocol/client';
import { type Tracer, trace } from '@opentelemetry/api';
import { z } from 'zod';
import { serverHttpOverrides } from '../config/http.js';
import {
  ClosedError,
  ConfigError,
  ConnectionError,
  InteropError,
  NotConnectedError,
  ToolDefinitionChangedError,
  ToolNotFoundError,
} from '../errors.js';
import { createHttpClient, type HttpClient, type HttpOptions } from '../net/http.js';
import type { NetworkPolicy } from '../net/network.js';
import { CapabilitySet } from '../security/capability-set.js';
import { CapabilityGate } from '../security/gate.js';
import { type PinnedToolDefinition, PinStore, toolChangeDiff } from '../security/pinning.js';
import type { Approver, AuditSink, CheckContext, Decision } from '../security/types.js';
import type { ArgumentLimits } from '../tools/limits.js';
import {
  DEFAULT_MAX_TOOL_NAME_LENGTH,
  MAX_TOOL_NAME_LENGTH_LIMIT,
  MIN_TOOL_NAME_LENGTH,
} from '../tools/names.js';
import { DEFAULT_MAX_RESULT_CHARS, type ToolCallResult } from '../tools/normalize.js';
import { parseToolSchemas } from '../tools/schema.js';
import type { ToolCallOptions, ToolInvoker, ToolWrapper } from '../tools/tool-wrapper.js';
import { type CallPathDeps, runToolCall } from './call-path.js';
import { type CatalogChange, ToolCatalog } from './catalog.js';
import {
  type MCPServerConfig,
  type MCPServerConfigInput,
  parseServerConfig,
  parseServerConfigs,
  toConfigIssues,
} from './config.js';
import { ServerConnection } from './connection.js';
import { type MCPManagerEvents, TypedEvents } from './events.js';
import { type Logger, silentLogger } from './logger.js';
import { mapRequestError } from './request-errors.js';
import { LOG_LEVELS, logAt, type ServerLogSupport } from './server-logs.js';
import { InFlightCalls } from './server-request-trace.js';
import {
  type ElicitationHandler,
  type RootsOption,
  type SamplingHandler,
  type ServerRequestKind,
  type ServerRequestSupport,
  serverRequestSupport,
  type UrlElicitationHandler,
} from './server-requests.js';
import { requestSignal } from './signals.js';
import type { ClientIdentity, ServerAuthFactory } from './transport.js';

/** Options of {@link MCPClientManager}. */
export interface MCPClientManagerOptions {
  /**
   * The capability set every call is checked against. Without one, every call is denied with
   * `CAPABILITY_DENIED` (default deny); use `CapabilitySet.allowAll()` only in tests.
   */
  capabilities?: CapabilitySet | undefined;
  /** Decides `ask` rules. Without one, `ask` is deny. */
  approver?: Approver | undefined;
  /** Receives every decision. */
  audit?: AuditSink | undefined;
  /** Whether a failing audit sink blocks calls. @default 'block' */
  auditFailure?: 'block' | 'continue' | undefined;
  /** The agent name put in audit records and conditions when a call names none. */
  agent?: string | undefined;
  /** The principal (tenant, user) put in audit records and shared quota keys when a call names none. */
  principal?: string | undefined;
  /**
   * Caps on each call's arguments, checked before validation and before anything is sent: text size, nesting
   * and number of values. @default DEFAULT_MAX_ARGUMENT_BYTES (4 MiB), _DEPTH (64), _NODES (100 000)
   */
  argumentLimits?: ArgumentLimits | undefined;
  /** Longest exposed tool name (56-128: room for a 40-character server name and a hash suffix). @default 64 */
  maxToolNameLength?: number | undefined;
  /** Results longer than this are cut with a visible notice. @default 100 000 */
  maxResultChars?: number | undefined;
  /** Name and version sent in `initialize`. @default { name: 'interlock', version: <package version> } */
  clientInfo?: ClientIdentity | undefined;
  /** @default silent */
  logger?: Logger | undefined;
  /** The fetch used for HTTP transports. @default undici's fetch over one shared keep-alive dispatcher */
  fetch?: FetchLike | undefined;
  /**
   * SSRF guard: which hosts HTTP servers, redirects and OAuth endpoints may resolve to. With a custom `fetch` only
   * the URL string is checked (its sockets are its own). @default DEFAULT_NETWORK_POLICY (loopback and private allowed, link-local/cloud metadata refused);
   * pass `{}` to refuse loopback, private and CGNAT addresses as well
   */
  network?: NetworkPolicy | undefined;
  /** The shared dispatcher: proxy (`'env'` by default), custom CA, client certificate (mTLS), pooling. */
  http?: HttpOptions | undefined;
  /**
   * An HTTP stack shared with others (an engine's, from `createHttpClient`): its guard, proxy, certificates and
   * pooled sockets are used, and its owner closes it. Excludes `fetch`, `network` and `http`.
   */
  httpClient?: HttpClient | undefined;
  /**
   * Auth per HTTP server: OAuth (a config's `auth`) and dynamic headers, e.g. `createServerAuth()` from
   * `mcp-interlock/auth`. @default none (static `headers` only)
   */
  serverAuth?: ServerAuthFactory | undefined;
  /**
   * Where tool definitions are pinned (rug-pull defense). Load one with `PinStore.load(path)` and save it after
   * approvals so they survive restarts. @default a new in-memory store
   */
  pins?: PinStore | undefined;
  /**
   * The OpenTelemetry tracer for connect, `tools/list` and `tools/call` spans. Only the API is used: without a
   * registered SDK the spans cost next to nothing. @default trace.getTracer('interlock')
   */
  tracer?: Tracer | undefined;
  /**
   * Answers a server's form-mode elicitation (a question for the user). Each request is first decided on
   * `mcp:{server}:elicitation` / `request`; denied ones are declined without asking. @default none: the
   * elicitation capability is not declared
   */
  onElicitation?: ElicitationHandler | undefined;
  /**
   * Answers a server's URL-mode elicitation (open a URL in the user's browser). Unsafe URLs are refused first;
   * the rest are decided on `mcp:{server}:elicitation` / `request` with `mode`, `url`, `host` and `punycode` as
   * the condition's `args` (an allowlist of domains); denied ones are declined. Interlock never fetches the URL.
   * @default none: URL mode is not declared
   */
  onUrlElicitation?: UrlElicitationHandler | undefined;
  /**
   * Answers a server's sampling request (`sampling/createMessage`), decided first on `mcp:{server}:sampling` /
   * `request` (`maxTokens`, the model hints as `models`, the offered `tools` and `toolChoice` are the
   * condition's `args`); denied ones get an error. @default none: the sampling capability is not declared
   */
  onSampling?: SamplingHandler | undefined;
  /**
   * The least severe log message servers may send: set with `logging/setLevel` on 2025-era servers that declare
   * logging, and sent with every call on 2026-07-28 servers (a call's own `logLevel` wins). Messages go to the
   * logger and the `server_log` event. @default none: 2026 servers send no log messages
   */
  logLevel?: LoggingLevel | undefined;
  /** Declares sampling with tools: servers may offer tools to the sampled model. @default false */
  samplingWithTools?: boolean | undefined;
  /**
   * The roots (`file://` URIs) servers may see. Each root is decided on `mcp:{server}:roots` / `request` with its
   * `uri`, `path` and `name` as `args`; only allowed ones are sent, and none allowed is an error.
   * @default none: the roots capability is not declared
   */
  roots?: RootsOption | undefined;
}

/** Options of a resource read or prompt request. */
export interface ResourceRequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** The agent on whose behalf it is made (conditions, audit). @default the manager's or view's agent */
  agent?: string;
  /** Who the agent acts for (audit, shared quotas). @default the manager's principal */
  principal?: string;
}

/** Options of {@link MCPClientManager.withCapabilities}. */
export interface CapabilityViewOptions {
  approver?: Approver | undefined;
  audit?: AuditSink | undefined;
  auditFailure?: 'block' | 'continue' | undefined;
  agent?: string | undefined;
  /** The gate's clock (for audit times). */
  clock?: (() => number) | undefined;
}

/**
 * Calls through a manager's live connections, checked against a derived capability set (see
 * {@link MCPClientManager.withCapabilities}). Wrappers for a model must call through the view, not the manager.
 */
export interface CapabilityView extends ToolInvoker {
  readonly capabilities: CapabilitySet;
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
  executeTool(name: string, args?: Record<string, unknown>, options?: ToolCallOptions): Promise<string>;
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

/** One server's health, from `manager.health()`. */
export interface ServerHealth {
  state: ServerConnection['state'];
  transport: ServerConnection['transport'];
  /** The protocol revision agreed with the server, e.g. `2026-07-28` or `2025-11-25`; undefined before connect. */
  protocolVersion: string | undefined;
  /** When the server entered its current state (ISO 8601). */
  since: string;
  reconnects: number;
  lastError: { code: string | undefined; message: string } | undefined;
  callsInFlight: number;
  callsQueued: number;
  calls: number;
  errors: number;
  /** Latency percentiles over recent calls, in ms; undefined before any call. */
  latencyMs: { p50: number | undefined; p95: number | undefined };
}

const OptionsSchema = z.object({
  maxToolNameLength: z.number().int().min(MIN_TOOL_NAME_LENGTH).max(MAX_TOOL_NAME_LENGTH_LIMIT).optional(),
  maxResultChars: z.number().int().min(100).optional(),
  auditFailure: z.enum(['block', 'continue']).optional(),
  agent: z.string().min(1).optional(),
  principal: z.string().min(1).max(256).optional(),
  argumentLimits: z
    .strictObject({
      maxBytes: z.number().int().positive().optional(),
      maxDepth: z.number().int().positive().max(10_000).optional(),
      maxNodes: z.number().int().positive().optional(),
    })
    .optional(),
  clientInfo: z.object({ name: z.string().min(1), version: z.string().min(1) }).optional(),
  onElicitation: z
    .custom<ElicitationHandler>((v) => typeof v === 'function', 'must be a function')
    .optional(),
  onUrlElicitation: z
    .custom<UrlElicitationHandler>((v) => typeof v === 'function', 'must be a function')
    .optional(),
  onSampling: z.custom<SamplingHandler>((v) => typeof v === 'function', 'must be a function').optional(),
  samplingWithTools: z.boolean().optional(),
  logLevel: z.enum(LOG_LEVELS).optional(),
  roots: z
    .union([
      z.array(
        z.object({
          uri: z.string().startsWith('file://', 'a root must be a file:// URI'),
          name: z.string().optional(),
        }),
      ),
      z.custom<RootsOption>((v) => typeof v === 'function', 'must be a list of roots or a function'),
    ])
    .optional(),
});

/** A tool whose definition changed since it was pinned, with what changed: calls are blocked until approved. */
export interface BlockedToolChange {
  name: string;
  server: string;
  tool: string;
  /** The hash pinned (and approved) before. */
  pinnedHash: string;
  /** The hash of the definition awaiting approval: give it to `approveToolChange`. */
  currentHash: string;
  /** The pinned definition, when the pin store kept it (pin files written by older versions did not). */
  previous: PinnedToolDefinition | undefined;
  /** The definition awaiting approval (its pinned parts). */
  current: PinnedToolDefinition;
  /** A line diff of description, schemas and annotations: `- ` pinned, `+ ` new. */
  diff: string[];
}

/** The package version reported to servers. */
export const CLIENT_VERSION = '0.1.0';

/** Connects MCP servers in parallel and gates, runs and normalizes their tool calls. */
export class MCPClientManager implements ToolInvoker {
  readonly #connections = new Map<string, ServerConnection>();
  readonly #pending = new Map<string, Promise<ServerConnection>>();
  readonly #catalog: ToolCatalog;
  readonly #events = new TypedEvents<MCPManagerEvents>();
  readonly #gate: CapabilityGate;
  readonly #capabilities: CapabilitySet;
  readonly #logger: Logger;
  readonly #identity: ClientIdentity;
  readonly #http: HttpClient;
  readonly #ownsHttp: boolean;
  readonly #maxResultChars: number;
  readonly #agent: string | undefined;
  readonly #pins: PinStore;
  readonly #tracer: Tracer;
  readonly #serverAuth: ServerAuthFactory | undefined;
  readonly #serverRequests: ServerRequestSupport | undefined;
  readonly #serverLogs: ServerLogSupport;
  readonly #callPath: CallPathDeps;
  readonly #unwatchPins: () => void;
  #callIds = 0;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Aborts connects still in flight when the manager closes, so close() never waits out a connect timeout. */
  readonly #closeController = new AbortController();

  constructor(options: MCPClientManagerOptions = {}) {
    // Every connect in flight listens on this signal: connectAll of more than 10 servers is no leak.
    setMaxListeners(0, this.#closeController.signal);
    const parsed = OptionsSchema.safeParse({
      maxToolNameLength: options.maxToolNameLength,
      maxResultChars: options.maxResultChars,
      auditFailure: options.auditFailure,
      agent: options.agent,
      clientInfo: options.clientInfo,
      onElicitation: options.onElicitation,
      onUrlElicitation: options.onUrlElicitation,
      onSampling: options.onSampling,
      samplingWithTools: options.samplingWithTools,
      roots: options.roots,
      logLevel: options.logLevel,
    });
    if (!parsed.success) {
      const issues = toConfigIssues(parsed.error);
      throw new ConfigError(
        `Invalid MCPClientManager options: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
        { issues },
      );
    }
    this.#capabilities = options.capabilities ?? new CapabilitySet();
    this.#gate = new CapabilityGate({
      capabilities: this.#capabilities,
      approver: options.approver,
      audit: options.audit,
      auditFailure: options.auditFailure ?? 'block',
    });
    this.#logger = options.logger ?? silentLogger;
    this.#identity = options.clientInfo ?? { name: 'interlock', version: CLIENT_VERSION };
    if (options.httpClient !== undefined) {
      const both = (['fetch', 'network', 'http'] as const).filter((k) => options[k] !== undefined);
      if (both.length > 0)
        throw new ConfigError(
          `Invalid MCPClientManager options: httpClient brings its own HTTP settings; drop ${both.join(', ')} or set them on the client.`,
          { issues: both.map((k) => ({ path: k, message: 'not allowed with httpClient' })) },
        );
    }
    this.#ownsHttp = options.httpClient === undefined;
    this.#http =
      options.httpClient ??
      createHttpClient({ fetch: options.fetch, network: options.network, http: options.http });
    this.#serverAuth = options.serverAuth;
    this.#maxResultChars = options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS;
    this.#agent = options.agent;
    this.#pins = options.pins ?? new PinStore();
    // Issue 16: a pin another process wrote (an approval, a first sighting) re-checks this manager's tools.
    this.#unwatchPins = this.#pins.onChange((change) => {
      if (change.origin === 'shared') this.#pinChanged(change.server, change.tool);
    });
    this.#tracer = options.tracer ?? trace.getTracer('interlock', CLIENT_VERSION);
    this.#serverLogs = {
      level: options.logLevel,
      onLog: (entry) => {
        const text = this.#http.redactor.mask(entry.text);
        const line = `[${entry.server} log${entry.logger === undefined ? '' : ` ${entry.logger}`}] ${text}`;
        logAt(this.#logger, entry.level)(line, { server: entry.server });
        this.#events.emit('server_log', () => ({ ...entry, text }));
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
      },
      {
        authorize: (server, kind, args) =>
          this.#gate.authorize({
            resource: `mcp:${server}:${kind}`,
            action: 'request',
            context: { args, agent: this.#agent, principal: options.principal },
            server,
          }),
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
      argumentLimits: options.argumentLimits,
      redactor: this.#http.redactor,
      answerServerRequest: this.#serverRequests?.answer,
      ...(this.#serverRequests !== undefined && { inFlight }),
      logLevel: options.logLevel,
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
    for (const config of parsed) this.#assertNameFree(config.name);
    const results = await Promise.allSettled(
      parsed.map((config) => (config.enabled ? this.#connect(config) : Promise.resolve(undefined))),
    );
    const out: Record<string, boolean> = {};
    parsed.forEach((config, i) => {
      out[config.name] = results[i]?.status === 'fulfilled' && results[i].value !== undefined;
    });
    return out;
  }

  /** Connects one server. Rejects with `ConnectionError` when it fails (the connection keeps the error). */
  async connectServer(config: MCPServerConfigInput): Promise<ServerConnection> {
    this.#assertOpen();
    const parsed = parseServerConfig(config);
    this.#assertNameFree(parsed.name);
    if (!parsed.enabled) {
      throw new ConfigError(`Server '${parsed.name}' is disabled (enabled: false); enable it to connect.`, {
        server: parsed.name,
      });
    }
    return this.#connect(parsed);
  }

  #assertNameFree(name: string): void {
    const existing = this.#connections.get(name);
    if (this.#pending.has(name) || (existing !== undefined && existing.state !== 'closed')) {
      throw new ConfigError(
        `A server named '${name}' is already connected or connecting; names must be unique.`,
        {
          server: name,
          issues: [{ path: 'name', message: 'duplicate server name' }],
        },
      );
    }
  }

  /** What a server config holds that a server may echo back: secret-named headers and env values, URL passwords. */
  #registerSecrets(config: MCPServerConfig): void {
    const redactor = this.#http.redactor;
    if (config.transport === 'stdio') {
      redactor.addNamed(config.env);
      return;
    }
    redactor.addNamed(config.headers);
    const password = URL.canParse(config.url) ? new URL(config.url).password : '';
    if (password !== '') redactor.add(decodeURIComponent(password));
  }

  #connect(config: MCPServerConfig): Promise<ServerConnection> {
    this.#registerSecrets(config);
    const connection = new ServerConnection(config, {
      onLost: (conn, error) => {
        this.#logger.warn(`server '${conn.name}' connection lost: ${error.message}`, { server: conn.name });
        this.#events.emit('disconnected', { server: conn.name, reason: 'lost', error });
      },
      onReconnecting: (conn, attempt, delayMs, error) => {
        this.#logger.info(`reconnecting '${conn.name}' (attempt ${attempt}) in ${delayMs} ms`, {
          server: conn.name,
        });
        this.#events.emit('reconnecting', { server: conn.name, attempt, delayMs, error });
      },
      onReconnected: (conn, attempt) => {
        // Tools are listed again on every reconnect, and pins re-checked; wrappers handed out stay valid.
        this.#mergeLive(conn);
        this.#events.emit('reconnected', {
          server: conn.name,
          attempt,
          tools: this.#catalog.serverTools(conn.name).length,
        });
      },
      onFailed: (conn, error) => {
        this.#logger.warn(`server '${conn.name}' failed: ${error.message}`, { server: conn.name });
        this.#events.emit('failed', { server: conn.name, error });
      },
      onToolListChanged: (conn) => this.#scheduleRefresh(conn),
      onWarning: (conn, code, message) => {
        this.#logger.warn(message, { server: conn.name });
        this.#events.emit('warning', { server: conn.name, code, message });
      },
      onStderr: (conn, line) => this.#logger.debug(`[${conn.name} stderr] ${line}`, { server: conn.name }),
    });
    this.#connections.set(config.name, connection);
    const started = performance.now();
    this.#events.emit('connecting', { server: config.name, transport: config.transport });
    const promise = connection
      .connect(
        {
          identity: this.#identity,
          fetch: this.#http.fetch,
          resolveFetch: this.#resolveFetch(config),
          tracer: this.#tracer,
          serverAuth: this.#serverAuth,
          serverRequests: this.#serverRequests,
          serverLogs: this.#serverLogs,
          redactor: this.#http.redactor,
        },
        this.#closeController.signal,
      )
      .then(async () => {
        try {
          this.#mergeLive(connection, false);
        } catch (err) {
          // Either connected with its tools, or failed and closed: never ready with a live process and no tools.
          await connection.close().catch(() => {});
          this.#catalog.removeServer(config.name);
          throw new ConnectionError(
            `Server '${config.name}' connected, but its tool list cannot be used (${(err as Error).message.replace(/\.$/, '')}; a tool schema nested too deeply does this). The server was closed.`,
            { server: config.name, cause: err },
          );
        }
        this.#events.emit('connected', {
          server: config.name,
          transport: connection.transport,
          durationMs: performance.now() - started,
          tools: this.#catalog.serverTools(config.name).length,
        });
        return connection;
      })
      .catch((error: Error) => {
        this.#logger.warn(error.message, { server: config.name });
        this.#events.emit('connection_failed', {
          server: config.name,
          error,
          durationMs: performance.now() - started,
        });
        throw error;
      })
      .finally(() => this.#pending.delete(config.name));
    this.#pending.set(config.name, promise);
    return promise;
  }

  /**
   * The fetch of each connect attempt of a server with its own `tls` / `proxy`: its certificate files are read
   * again for every attempt, so a reconnect picks up rotated ones; a file that cannot be read fails that attempt
   * of that server alone with `INVALID_CONFIG`. Undefined for other servers (they use the shared fetch).
   */
  #resolveFetch(config: MCPServerConfig): (() => Promise<FetchLike>) | undefined {
    if (config.transport === 'stdio' || (config.tls === undefined && config.proxy === undefined))
      return undefined;
    return async () => this.#http.fetchFor(await serverHttpOverrides(config));
  }

  /** Closes one server and removes its tools. Safe to call for an unknown or closed server. */
  async disconnectServer(name: string): Promise<void> {
    const connection = this.#connections.get(name);
    if (connection === undefined) return;
    this.#connections.delete(name);
    const removed = this.#catalog.removeServer(name);
    await connection.close();
    if (removed.length > 0)
      this.#events.emit('tools_changed', { server: name, added: [], removed, changed: [] });
    this.#events.emit('disconnected', { server: name, reason: 'closed' });
  }

  /** Closes every server with `Promise.allSettled`. Idempotent; the manager stays usable. */
  async disconnectAll(): Promise<void> {
    await Promise.allSettled([...this.#connections.keys()].map((name) => this.disconnectServer(name)));
  }

  /** Disconnects everything and releases the HTTP dispatcher. Safe to call twice. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      this.#unwatchPins();
      this.#closeController.abort(new ClosedError('The manager was closed while connecting.'));
      await Promise.allSettled([...this.#pending.values()]);
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
  getConnection(name: string): ServerConnection | undefined {
    return this.#connections.get(name);
  }

  /** Every connection, whatever its state. */
  get connections(): ServerConnection[] {
    return [...this.#connections.values()];
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
    return this.#catalog.wrappers().filter((wrapper) => {
      if (this.#catalog.get(wrapper.name)?.blocked !== undefined) return false;
      const ctx =
        context === undefined
          ? { annotations: wrapper.annotations }
          : { ...context, annotations: wrapper.annotations };
      return capabilities.couldAllow(`mcp:${wrapper.server}:${wrapper.tool}`, 'execute', ctx);
    });
  }

  /** Tools whose definition changed since it was pinned and whose calls are blocked until approved. */
  get blockedTools(): BlockedToolChange[] {
    return this.#catalog.wrappers().flatMap((wrapper) => {
      const blocked = this.#catalog.get(wrapper.name)?.blocked;
      if (blocked === undefined) return [];
      const previous = this.#pins.definition(wrapper.server, wrapper.tool);
      return [
        {
          name: wrapper.name,
          server: wrapper.server,
          tool: wrapper.tool,
          pinnedHash: blocked.pinned,
          currentHash: blocked.current,
          previous,
          current: blocked.definition,
          diff: toolChangeDiff(previous, blocked.definition),
        },
      ];
    });
  }

  /**
   * Approves a changed tool definition, bound to what was reviewed: `hash` is the `currentHash` shown by
   * {@link blockedTools} (at least its first 12 hex digits). Pins that definition and unblocks calls. Returns
   * false when the tool was not blocked; throws `TOOL_DEFINITION_CHANGED` when the definition awaiting approval
   * is not the one reviewed (it changed again). Save `manager.pins` afterwards for the approval to survive a
   * restart.
   */
  approveToolChange(name: string, hash: string): boolean {
    const approved = this.#catalog.approve(name, this.#pins, hash);
    if (approved) this.#logger.info(`approved the new definition of '${name}' (${hash.slice(0, 12)})`);
    return approved;
  }

  /**
   * Registers tool schemas for `server` without a connection (tests, schema checks, offline development).
   * Calling one raises `NOT_CONNECTED`. When the server connects for real, its live tools replace these.
   */
  registerTools(server: string, schemas: unknown): ToolWrapper[] {
    this.#assertOpen();
    const name = parseServerConfig({ name: server, transport: 'stdio', command: 'offline' }).name;
    const tools = parseToolSchemas(name, schemas);
    const live = this.#connections.get(name);
    if (live?.state === 'ready') {
      throw new ConfigError(
        `Server '${name}' is connected; its live tools cannot be replaced by offline schemas.`,
        {
          server: name,
        },
      );
    }
    const change = this.#catalog.merge(name, tools, { offline: true, filter: live?.config.tools });
    this.#report(name, change, true);
    return this.#catalog.serverTools(name);
  }

  /** Calls a tool by exposed name and resolves to its result as a string. */
  async executeTool(
    name: string,
    args?: Record<string, unknown>,
    options?: ToolCallOptions,
  ): Promise<string> {
    return (await this.callTool(name, args, options)).text;
  }

  /**
   * Calls a tool by exposed name: resolves the name, checks the capability set (nothing is sent when denied),
   * validates the arguments against the tool's schema, sends the call with the server's original tool name,
   * and normalizes the result.
   */
  async callTool(
    name: string,
    args?: Record<string, unknown>,
    options: ToolCallOptions = {},
  ): Promise<ToolCallResult> {
    return this.#call(this.#callPath, name, args, options);
  }

  #call(
    deps: CallPathDeps,
    name: string,
    args: Record<string, unknown> | undefined,
    options: ToolCallOptions,
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
    const connection = this.#connections.get(entry.wrapper.server);
    return runToolCall(deps, entry, connection, args ?? {}, options);
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
    const deps: CallPathDeps = { ...this.#callPath, gate, agent: options.agent ?? this.#agent };
    const agent = options.agent ?? this.#agent;
    return {
      capabilities,
      visibleTools: (context) => this.#visibleTools(capabilities, context),
      readResource: (server, uri, opts) => this.#readResource(gate, agent, server, uri, opts ?? {}),
      getPrompt: (server, name, args, opts) =>
        this.#getPrompt(gate, agent, server, name, args ?? {}, opts ?? {}),
      callTool: (name, args, opts) => this.#call(deps, name, args, opts ?? {}),
      executeTool: async (name, args, opts) => (await this.#call(deps, name, args, opts ?? {})).text,
      authorizeServerRequest: (server, kind, args, opts) =>
        gate.authorize({
          resource: `mcp:${server}:${kind}`,
          action: 'request',
          context: { args, agent, principal: opts?.principal },
          server,
        }),
    };
  }

  /** Per-server health: state, since, reconnects, last error, calls in flight and queued, counts, latency. */
  health(): Record<string, ServerHealth> {
    const out: Record<string, ServerHealth> = {};
    for (const connection of this.#connections.values()) {
      const error = connection.error;
      out[connection.name] = {
        state: connection.state,
        transport: connection.transport,
        protocolVersion: connection.protocolVersion,
        since: new Date(connection.since).toISOString(),
        reconnects: connection.reconnects,
        lastError:
          error === undefined
            ? undefined
            : { code: error instanceof InteropError ? error.code : undefined, message: error.message },
        callsInFlight: connection.stats.inFlight,
        callsQueued: connection.limiter.queued,
        calls: connection.stats.calls,
        errors: connection.stats.errors,
        latencyMs: { p50: connection.stats.percentile(0.5), p95: connection.stats.percentile(0.95) },
      };
    }
    return out;
  }

  /**
   * Tries to reconnect `name` now (after it `failed`, or to skip a pending backoff delay). Resolves true when the
   * server is ready again.
   */
  async reconnectServer(name: string): Promise<boolean> {
    this.#assertOpen();
    const connection = this.#connections.get(name);
    if (connection === undefined) {
      throw new NotConnectedError(`No server named '${name}'; connect it with connectServer first.`, {
        server: name,
      });
    }
    await connection.reconnectNow();
    return connection.state === 'ready';
  }

  /** Reads a resource, gated on `mcp-resource:{server}:{uri}` / `read`. */
  readResource(
    server: string,
    uri: string,
    options: ResourceRequestOptions = {},
  ): Promise<ReadResourceResult> {
    return this.#readResource(this.#gate, this.#agent, server, uri, options);
  }

  /** Gets a prompt, gated on `mcp-prompt:{server}:{name}` / `get`. */
  getPrompt(
    server: string,
    name: string,
    args: Record<string, string> = {},
    options: ResourceRequestOptions = {},
  ): Promise<GetPromptResult> {
    return this.#getPrompt(this.#gate, this.#agent, server, name, args, options);
  }

  async #readResource(
    gate: CapabilityGate,
    agent: string | undefined,
    server: string,
    uri: string,
    options: ResourceRequestOptions,
  ): Promise<ReadResourceResult> {
    await gate.authorize({
      resource: `mcp-resource:${server}:${uri}`,
      action: 'read',
      context: { agent: options.agent ?? agent, principal: options.principal ?? this.#callPath.principal },
      server,
    });
    return this.#request(server, `resource '${uri}'`, options, (client, request) =>
      client.readResource({ uri }, request),
    );
  }

  async #getPrompt(
    gate: CapabilityGate,
    agent: string | undefined,
    server: string,
    name: string,
    args: Record<string, string>,
    options: ResourceRequestOptions,
  ): Promise<GetPromptResult> {
    await gate.authorize({
      resource: `mcp-prompt:${server}:${name}`,
      action: 'get',
      context: {
        args,
        agent: options.agent ?? agent,
        principal: options.principal ?? this.#callPath.principal,
      },
      server,
    });
    return this.#request(server, `prompt '${name}'`, options, (client, request) =>
      client.getPrompt({ name, arguments: args }, request),
    );
  }

  /**
   * One gated non-tool request: like a tool call, it waits out a reconnect within its timeout and maps what the
   * SDK throws to coded errors.
   */
  async #request<T>(
    server: string,
    what: string,
    options: { signal?: AbortSignal; timeoutMs?: number },
    send: (client: Client, request: { timeout: number; signal?: AbortSignal }) => Promise<T>,
  ): Promise<T> {
    const connection = this.#connections.get(server);
    if (connection === undefined) {
      throw new NotConnectedError(`No server named '${server}' is connected; connect it first.`, { server });
    }
    const timeoutMs = options.timeoutMs ?? connection.config.timeoutMs;
    const client = await connection.acquireClient(timeoutMs, options.signal);
    const perCall = options.signal === undefined ? undefined : requestSignal(options.signal);
    try {
      return await send(client, {
        timeout: timeoutMs,
        ...(perCall === undefined ? {} : { signal: perCall.signal }),
      });
    } catch (err) {
      throw mapRequestError(err, {
        server,
        what,
        timeoutMs,
        signal: options.signal,
        redactor: this.#http.redactor,
      });
    } finally {
      perCall?.dispose();
    }
  }

  /** The ready connection of `server`, or NOT_CONNECTED at once (for refreshes, which never wait). */
  #live(server: string): ServerConnection {
    const connection = this.#connections.get(server);
    if (connection?.client !== undefined) return connection;
    const last = connection?.error === undefined ? '' : ` Last error: ${connection.error.message}`;
    throw new NotConnectedError(
      `Server '${server}' is not connected (state: ${connection?.state ?? 'unknown'}).${last}`,
      { server, cause: connection?.error },
    );
  }

  // ---- discovery refresh --------------------------------------------------------------------------------

  readonly #refreshing = new Map<string, Promise<void>>();
  readonly #refreshAgain = new Set<string>();

  /** Refreshes on `notifications/tools/list_changed`; bursts collapse into one follow-up refresh. */
  #scheduleRefresh(connection: ServerConnection): void {
    if (this.#refreshing.has(connection.name)) {
      this.#refreshAgain.add(connection.name);
      return;
    }
    const run = this.refreshTools(connection.name)
      .catch((error: Error) =>
        this.#events.emit('warning', {
          server: connection.name,
          code: error instanceof InteropError ? error.code : 'REFRESH_FAILED',
          message: `Refreshing the tools of '${connection.name}' failed: ${error.message}`,
        }),
      )
      .finally(() => {
        this.#refreshing.delete(connection.name);
        if (this.#refreshAgain.delete(connection.name)) this.#scheduleRefresh(connection);
      });
    this.#refreshing.set(connection.name, run);
  }

  /** Fetches `server`'s tool list again and merges it; wrappers handed out before stay valid. */
  async refreshTools(server: string): Promise<void> {
    const connection = this.#live(server);
    const client = connection.client as NonNullable<ServerConnection['client']>;
    const tools = await connection.listAllTools(client, { timeout: connection.config.timeoutMs });
    if (this.#connections.get(server) !== connection || connection.state !== 'ready') return;
    connection.tools = tools;
    this.#mergeLive(connection);
  }

  /** A pin changed elsewhere: unblocks the tool if it now matches, blocks it if it no longer does. */
  #pinChanged(server: string, tool: string): void {
    const onToolChange = this.#connections.get(server)?.config.onToolChange;
    const done = this.#catalog.recheckPin(server, tool, this.#pins, onToolChange);
    if (done === undefined) return;
    if (done.action === 'unblocked') {
      this.#logger.info(`the definition of '${done.name}' was approved in another process`, { server });
      return;
    }
    this.#report(
      server,
      {
        added: [],
        removed: [],
        changed: [],
        refused: [],
        collisions: [],
        pinChanges: [{ ...done, tool, action: 'blocked' }],
      },
      false,
    );
  }

  /** Merges a live server's discovered tools into the catalog (pins checked) and reports what changed. */
  #mergeLive(connection: ServerConnection, emitChange = true): void {
    const change = this.#catalog.merge(connection.name, connection.tools, {
      offline: false,
      filter: connection.config.tools,
      pins: this.#pins,
      onToolChange: connection.config.onToolChange,
    });
    this.#report(connection.name, change, emitChange);
  }

  #report(server: string, change: CatalogChange, emitChange: boolean): void {
    for (const refused of change.refused) {
      this.#logger.warn(`refused tool of '${server}': ${refused.reason}`, { server });
      this.#events.emit('tool_refused', { server, tool: refused.tool, reason: refused.reason });
      this.#events.emit('warning', {
        server,
        code: 'TOOL_REFUSED',
        message: `Tool ${JSON.stringify(refused.tool)} of server '${server}' was refused: ${refused.reason}`,
      });
    }
    for (const p of change.pinChanges) {
      this.#events.emit('tool_definition_changed', {
        server,
        tool: p.tool,
        name: p.name,
        pinnedHash: p.pinned,
        currentHash: p.current,
        action: p.action,
      });
      if (p.action !== 'accepted') {
        const what =
          p.action === 'blocked'
            ? `calls are blocked until the change is reviewed and approved (manager.approveToolChange('${p.name}', '${p.current.slice(0, 12)}'))`
            : 'the new definition was pinned (onToolChange: warn)';
        this.#logger.warn(`tool '${p.name}' changed its definition; ${what}`, { server });
        this.#events.emit('warning', {
          server,
          code: 'TOOL_DEFINITION_CHANGED',
          message: `Tool '${p.name}' of server '${server}' changed its definition since it was pinned; ${what}.`,
        });
      }
    }
    for (const c of change.collisions) {
      this.#events.emit('tool_name_collision', { server, tool: c.tool, name: c.name, other: c.other });
    }
    const changed = change.added.length + change.removed.length + change.changed.length > 0;
    if (emitChange && changed) {
      this.#events.emit('tools_changed', {
        server,
        added: change.added,
        removed: change.removed,
        changed: change.changed,
      });
    }
  }
}
