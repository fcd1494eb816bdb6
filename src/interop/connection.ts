/**
 * One server's connection: its state machine (`connecting → ready → reconnecting → ready | failed → closed`),
 * its client, what discovery found, call statistics, and the last lines of its stderr. The manager owns
 * connections; apps read them through `manager.getConnection(name)`.
 */
import type {
  Client,
  Implementation,
  Prompt,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  ServerCapabilities,
  Tool,
} from '@modelcontextprotocol/client';
import type { MCPServerConfig, ReconnectOptions } from '../config/servers.js';
import { ClosedError, ConnectionLostError, NotConnectedError, RequestTimeoutError } from '../errors.js';
import { requestSignal } from '../net/signals.js';
import { type Span, SpanKind, SpanStatusCode, type Tracer } from '../otel.js';
import { STDERR_LINES_KEPT } from '../protocol/bounds.js';
import { MessageTooLargeError, ProcessStdioTransport } from '../protocol/stdio-transport.js';
import { maskThenCut } from '../redact.js';
import { connectErrorOf } from './connect-errors.js';
import type { ConnectionHooks, ConnectOptions } from './connection-options.js';
import { type HttpAnswer, recordAnswers } from './describe-error.js';
import { CallLimiter } from './limiter.js';
import { type OpenClient, openClient } from './open-client.js';
import { paginate } from './paginate.js';
import { isFatalStreamError } from './sdk-errors.js';
import { CallStats } from './stats.js';

/** Lifecycle of a connection. */
export type ConnectionState = 'idle' | 'connecting' | 'ready' | 'reconnecting' | 'failed' | 'closed';

/** Non-JSON stdout lines of a live server reported one by one (per connection); later ones are skipped quietly. */
export const STDOUT_GARBAGE_WARNINGS = 5;
/** The delay before reconnect attempt `attempt` (1-based). `random` is injectable for tests. */
export function reconnectDelay(
  options: ReconnectOptions,
  attempt: number,
  random: () => number = Math.random,
): number {
  const exact = Math.min(options.maxDelayMs, options.initialDelayMs * options.factor ** (attempt - 1));
  return options.jitter === 'full' ? Math.floor(random() * exact) : exact;
}

/**
 * What an app may read of one server's connection (`manager.getConnection(name)`, `manager.connections`): its
 * state, what the server said about itself and what it lists. The connection itself stays internal (issue 15).
 */
export interface ServerConnectionInfo {
  readonly name: string;
  readonly config: MCPServerConfig;
  readonly state: ConnectionState;
  /** When the connection entered its current state (ms since the epoch). */
  readonly since: number;
  /** The last error: why it failed, or why it was lost. */
  readonly error: Error | undefined;
  readonly reconnects: number;
  /** The transport in use (`auto` resolves to `http` or `sse` once connected). */
  readonly transport: 'stdio' | 'sse' | 'http' | 'auto';
  /** The stdio server's process id, while it runs. */
  readonly pid: number | undefined;
  /** The last lines the stdio server wrote to stderr, secrets masked. */
  readonly stderr: readonly string[];
  /** What the server said about itself in `initialize` or `server/discover`. */
  readonly serverInfo: Implementation | undefined;
  /** The protocol revision agreed with the server (`2026-07-28`, `2025-11-25`, ...); undefined before connect. */
  readonly protocolVersion: string | undefined;
  readonly serverCapabilities: ServerCapabilities | undefined;
  readonly instructions: string | undefined;
  /** Discovery results (raw, as the server sent them). */
  readonly tools: readonly Tool[];
  readonly resources: readonly Resource[];
  readonly resourceTemplates: readonly ResourceTemplate[];
  readonly prompts: readonly Prompt[];
  /** How long the last successful connect took, discovery included. */
  readonly connectDurationMs: number | undefined;
}

/** One MCP server's connection. */
export class ServerConnection implements ServerConnectionInfo {
  readonly name: string;
  readonly config: MCPServerConfig;
  /**
   * Call counts and latency; read them through `manager.health()`.
   * @internal
   */
  readonly stats = new CallStats();
  /**
   * Bounds calls in flight (`maxConcurrentCalls`, `maxQueuedCalls`).
   * @internal
   */
  readonly limiter: CallLimiter;
  #state: ConnectionState = 'idle';
  #since = Date.now();
  #error: Error | undefined;
  #open: OpenClient | undefined;
  #reconnects = 0;
  #retry: { timer: NodeJS.Timeout | undefined; wake: () => void } | undefined;
  #loop: Promise<void> | undefined;
  #waiters = new Set<() => void>();
  #connectOptions: ConnectOptions | undefined;
  readonly #stderr: string[] = [];
  readonly #hooks: ConnectionHooks;
  #garbageLines = 0;

  /** What the server said about itself in `initialize` or `server/discover`. */
  serverInfo: Implementation | undefined;
  /** The protocol revision agreed with the server (`2026-07-28`, `2025-11-25`, ...); undefined before connect. */
  protocolVersion: string | undefined;
  serverCapabilities: ServerCapabilities | undefined;
  instructions: string | undefined;
  /** Discovery results (raw, as the server sent them). */
  tools: Tool[] = [];
  resources: Resource[] = [];
  resourceTemplates: ResourceTemplate[] = [];
  prompts: Prompt[] = [];
  /** How long the last successful connect took, discovery included. */
  connectDurationMs: number | undefined;

  /** @internal Connections are created by the manager. */
  constructor(config: MCPServerConfig, hooks: ConnectionHooks) {
    this.name = config.name;
    this.config = config;
    this.#hooks = hooks;
    this.limiter = new CallLimiter(config.name, config.maxConcurrentCalls, config.maxQueuedCalls);
  }

  get state(): ConnectionState {
    return this.#state;
  }
  /** When the connection entered its current state (ms since the epoch). */
  get since(): number {
    return this.#since;
  }
  /** The error that failed or last interrupted the connection. */
  get error(): Error | undefined {
    return this.#error;
  }
  /** Successful reconnects so far. */
  get reconnects(): number {
    return this.#reconnects;
  }
  /** The SDK client while ready. */
  get client(): Client | undefined {
    return this.#state === 'ready' ? this.#open?.client : undefined;
  }
  /** The transport in use: `auto` shows as `http` or `sse` once connected. */
  get transport(): 'stdio' | 'sse' | 'http' | 'auto' {
    return this.#open?.kind ?? this.config.transport;
  }
  /** Process id of a stdio server while it runs. */
  get pid(): number | undefined {
    return this.#open?.pid;
  }
  /** The last lines the server wrote to stderr (stdio only). */
  get stderr(): readonly string[] {
    return [...this.#stderr];
  }

  #setState(state: ConnectionState, error?: Error): void {
    this.#state = state;
    this.#since = Date.now();
    if (error !== undefined) this.#error = error;
    if (state === 'ready') this.#error = undefined;
    if (state !== 'connecting' && state !== 'reconnecting') {
      for (const wake of this.#waiters) wake();
      this.#waiters.clear();
    }
  }

  /**
   * @internal The manager connects; use `manager.connectServer`.
   * Connects and runs discovery within `connectTimeoutMs`. Rejects with a `ConnectionError` (the state is then
   * `failed` and the error kept) and never leaves a process or socket behind on failure.
   */
  async connect(options: ConnectOptions, signal?: AbortSignal): Promise<void> {
    if (this.#state === 'closed')
      throw new ClosedError(`Server '${this.name}' is closed.`, { server: this.name });
    this.#connectOptions = options;
    this.#setState('connecting');
    try {
      await this.#openAndDiscover(options, signal);
    } catch (err) {
      const error = err as Error;
      if ((this.#state as ConnectionState) !== 'closed') this.#setState('failed', error);
      throw error;
    }
  }

  /** One attempt: open a client, run discovery, go `ready`. Throws a `ConnectionError` on failure. */
  async #openAndDiscover(options: ConnectOptions, signal?: AbortSignal): Promise<void> {
    const started = performance.now();
    const timeoutMs = this.config.connectTimeoutMs;
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = new RequestTimeoutError(
          `Server '${this.name}' did not finish connecting within ${timeoutMs} ms (connectTimeoutMs).`,
          timeoutMs,
          { server: this.name },
        );
        controller.abort(err);
        reject(err);
      }, timeoutMs);
    });
    const span = options.tracer.startSpan('initialize', {
      kind: SpanKind.CLIENT,
      attributes: { 'mcp.method.name': 'initialize', 'interlock.server': this.name },
    });
    let open: OpenClient | undefined;
    // The last answer of the server's URL that was not MCP, to say what it was if the connect fails.
    let answer: HttpAnswer | undefined;
    try {
      const attempt = (async () => {
        const given = options.resolveFetch === undefined ? options.fetch : await options.resolveFetch();
        const config = this.config;
        const fetch =
          config.transport === 'stdio'
            ? given
            : recordAnswers(given, config.url, (seen) => {
                answer = seen;
              });
        open = await openClient(this.config, {
          identity: options.identity,
          fetch,
          serverAuth: options.serverAuth,
          signal: controller.signal,
          timeoutMs,
          onStderr: (line) => this.#pushStderr(line),
          mask: options.redactor === undefined ? undefined : (text) => options.redactor?.mask(text) ?? text,
          serverRequests: options.serverRequests,
          serverLogs: options.serverLogs,
        });
        if (this.#state === 'closed')
          throw new ClosedError(`Server '${this.name}' was closed while connecting.`);
        await this.#discover(open.client, controller.signal, timeoutMs, options.tracer, span);
      })();
      attempt.catch(() => {});
      await Promise.race([attempt, deadline]);
      if (this.#state === 'closed')
        throw new ClosedError(`Server '${this.name}' was closed while connecting.`);
    } catch (err) {
      controller.abort();
      const opened = open as OpenClient | undefined;
      await opened?.client.close().catch(() => {});
      const reason: unknown = signal?.aborted ? signal.reason : undefined;
      const error =
        err instanceof ClosedError
          ? err
          : reason instanceof ClosedError
            ? reason
            : this.#connectError(err, opened, answer);
      span.recordException(error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
      throw error;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      span.end();
    }
    const ready = open as unknown as OpenClient;
    this.#open = ready;
    this.connectDurationMs = performance.now() - started;
    const client = ready.client;
    client.onclose = () => this.#handleClose(ready);
    client.onerror = (error) => this.#handleTransportError(ready, error);
    this.#garbageLines = 0;
    this.#setState('ready');
  }

  #connectError(err: unknown, open: OpenClient | undefined, answer: HttpAnswer | undefined): Error {
    return connectErrorOf(err, {
      config: this.config,
      stderr: this.#stderr,
      exit: open?.transport instanceof ProcessStdioTransport ? open.transport.describeExit() : undefined,
      redactor: this.#connectOptions?.redactor,
      answer,
    });
  }

  async #discover(
    client: Client,
    signal: AbortSignal,
    timeoutMs: number,
    tracer: Tracer,
    parent: Span,
  ): Promise<void> {
    this.serverInfo = client.getServerVersion();
    this.protocolVersion = client.getNegotiatedProtocolVersion();
    this.serverCapabilities = client.getServerCapabilities();
    this.instructions = client.getInstructions();
    if (this.serverInfo !== undefined) {
      parent.setAttribute(
        'interlock.server.implementation',
        `${this.serverInfo.name}@${this.serverInfo.version}`,
      );
    }
    const caps = this.serverCapabilities ?? {};
    const opts = { signal, timeout: timeoutMs };
    if (caps.tools !== undefined) {
      this.tools = await this.listAllTools(client, opts, tracer);
      client.setNotificationHandler('notifications/tools/list_changed', () =>
        this.#hooks.onToolListChanged(this),
      );
      if (client.getProtocolEra() === 'modern' && caps.tools.listChanged === true) {
        await this.#listenForToolChanges(client, timeoutMs);
      }
    } else {
      this.tools = [];
    }
    // Resources and prompts are extras: a server that fails to list them still serves its tools.
    const [resources, templates, prompts] = await Promise.allSettled([
      caps.resources
        ? paginate(
            (cursor) => client.listResources({ cursor }, opts),
            (r) => r.resources,
          )
        : [],
      caps.resources
        ? paginate(
            (cursor) => client.listResourceTemplates({ cursor }, opts),
            (r) => r.resourceTemplates,
          )
        : [],
      caps.prompts
        ? paginate(
            (cursor) => client.listPrompts({ cursor }, opts),
            (r) => r.prompts,
          )
        : [],
    ]);
    this.resources = resources.status === 'fulfilled' ? resources.value : [];
    this.resourceTemplates = templates.status === 'fulfilled' ? templates.value : [];
    this.prompts = prompts.status === 'fulfilled' ? prompts.value : [];
  }

  /**
   * Protocol 2026-07-28 servers send change notifications only on a `subscriptions/listen` stream. A stream the
   * server ends (or that breaks) counts as a lost connection: the reconnect lists the tools again and re-listens,
   * so no change is missed. A server that refuses the subscription keeps serving; its changes show on reconnect.
   */
  async #listenForToolChanges(client: Client, timeoutMs: number): Promise<void> {
    try {
      const subscription = await client.listen({ toolsListChanged: true }, { timeout: timeoutMs });
      void subscription.closed.then((how) => {
        if (how === 'local' || this.#open?.client !== client) return;
        this.markLost(
          new ConnectionLostError(
            `Server '${this.name}' ended its change subscription (subscriptions/listen).`,
            {
              server: this.name,
            },
          ),
        );
      });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.#hooks.onWarning(
        this,
        'LIST_CHANGED_UNAVAILABLE',
        `Server '${this.name}' refused subscriptions/listen (${message}); tool list changes show after a reconnect.`,
      );
    }
  }

  /**
   * Lists the tools again (after `notifications/tools/list_changed`) and keeps them as {@link tools}. Resolves
   * false, keeping the old list, when the connection stopped being ready meanwhile; NOT_CONNECTED is the caller's
   * to check first (a refresh never waits for a reconnect).
   */
  async relistTools(): Promise<boolean> {
    const client = this.client;
    if (client === undefined) return false;
    const tools = await this.listAllTools(client, { timeout: this.config.timeoutMs });
    if (this.state !== 'ready' || this.client !== client) return false;
    this.tools = tools;
    return true;
  }

  /** Lists every tool, following `nextCursor`, in a `tools/list` span. */
  async listAllTools(
    client: Client,
    options: { signal?: AbortSignal; timeout?: number },
    tracer: Tracer | undefined = this.#connectOptions?.tracer,
  ): Promise<Tool[]> {
    const span = tracer?.startSpan('tools/list', {
      kind: SpanKind.CLIENT,
      attributes: { 'mcp.method.name': 'tools/list', 'interlock.server': this.name },
    });
    try {
      const tools = await paginate(
        (cursor) => client.listTools({ cursor }, options),
        (r) => r.tools,
      );
      span?.setAttribute('interlock.tools.count', tools.length);
      return tools;
    } catch (err) {
      span?.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span?.end();
    }
  }

  #pushStderr(raw: string): void {
    const line = this.#connectOptions?.redactor?.mask(raw) ?? raw;
    this.#stderr.push(maskThenCut(line, undefined, 2000));
    if (this.#stderr.length > STDERR_LINES_KEPT) this.#stderr.shift();
    this.#hooks.onStderr(this, line);
  }

  #handleClose(open: OpenClient): void {
    if (this.#open !== open) return;
    const tooLarge = open.transport instanceof ProcessStdioTransport ? open.transport.tooLarge : undefined;
    if (tooLarge !== undefined) {
      // The transport closed it: the news is the message over the limit, not the exit it caused.
      this.markLost(new MessageTooLargeError(tooLarge.limit, { server: this.name, cause: tooLarge }));
      return;
    }
    const exit = open.transport instanceof ProcessStdioTransport ? open.transport.describeExit() : undefined;
    const stderr = this.#stderr.slice(-5).join('\n');
    const what = exit === undefined ? 'was lost' : exit;
    this.markLost(
      new ConnectionLostError(`Server '${this.name}' ${what}${stderr === '' ? '.' : `: ${stderr}`}`, {
        server: this.name,
      }),
    );
  }

  /**
   * Errors the transport reports outside any request. Over HTTP a stream that cannot be resumed, or a 404 for
   * our session (it expired, or the server restarted), means the connection is gone: reconnect with a new
   * `initialize`. Over stdio, skipped garbage lines are only warnings.
   */
  #handleTransportError(open: OpenClient, error: Error): void {
    if (this.#open !== open) return;
    const message = error.message;
    if (open.kind !== 'stdio' && isFatalStreamError(error)) {
      // Deferred a turn: when this error belongs to a request (the SDK reports it here and also rejects the
      // request), the call path sees the precise error first and can tell a never-processed call (404) apart.
      setImmediate(() =>
        this.markLost(
          new ConnectionLostError(`Server '${this.name}' stream failed: ${message}`, {
            server: this.name,
            cause: error,
          }),
        ),
      );
    } else if (open.kind === 'stdio') {
      // A server that logs to stdout does so on every call: the first lines are reported, then one notice.
      this.#garbageLines += 1;
      if (this.#garbageLines > STDOUT_GARBAGE_WARNINGS + 1) return;
      const text =
        this.#garbageLines > STDOUT_GARBAGE_WARNINGS
          ? `Server '${this.name}' keeps writing lines to stdout that are not JSON-RPC messages; they are skipped without further warnings (a stdio server should log to stderr).`
          : `Server '${this.name}': ${message}`;
      this.#hooks.onWarning(this, 'STDOUT_GARBAGE', this.#connectOptions?.redactor?.mask(text) ?? text);
    } else {
      this.#hooks.onWarning(this, 'TRANSPORT_ERROR', `Server '${this.name}': ${message}`);
    }
  }

  /**
   * Declares the live connection lost (the process exited, a stream failed, an HTTP session expired): closes the
   * client so every call in flight is rejected at once, then reconnects if the config allows.
   */
  markLost(error: Error): void {
    const open = this.#open;
    if (this.#state !== 'ready' || open === undefined) return;
    this.#open = undefined;
    // Closing rejects pending requests with ConnectionClosed and ends whatever is left of the process group.
    void open.client.close().catch(() => {});
    this.#error = error;
    this.#hooks.onLost(this, error);
    if (this.config.reconnect.enabled && this.#connectOptions !== undefined) {
      this.#startReconnecting(error, 1);
    } else {
      this.#setState('failed', error);
      this.#hooks.onFailed(this, error);
    }
  }

  #startReconnecting(error: Error, firstAttempt: number): void {
    this.#setState('reconnecting', error);
    const loop = this.#reconnectLoop(error, firstAttempt).finally(() => {
      if (this.#loop === loop) this.#loop = undefined;
    });
    this.#loop = loop;
  }

  async #reconnectLoop(initial: Error, firstAttempt: number): Promise<void> {
    const options = this.#connectOptions as ConnectOptions;
    const { reconnect } = this.config;
    let last = initial;
    for (let attempt = firstAttempt; attempt <= reconnect.maxAttempts; attempt++) {
      const delayMs = attempt === firstAttempt && firstAttempt === 0 ? 0 : reconnectDelay(reconnect, attempt);
      this.#hooks.onReconnecting(this, Math.max(attempt, 1), delayMs, last);
      await this.#sleep(delayMs);
      if (this.#state !== 'reconnecting') return;
      try {
        await this.#openAndDiscover(options);
        this.#reconnects += 1;
        this.#hooks.onReconnected(this, Math.max(attempt, 1));
        return;
      } catch (err) {
        if (this.#state !== 'reconnecting') return;
        last = err as Error;
        this.#error = last;
      }
    }
    this.#setState('failed', last);
    this.#hooks.onFailed(this, last);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(this.#retry?.timer);
        this.#retry = undefined;
        resolve();
      };
      this.#retry = { timer: setTimeout(wake, ms), wake };
    });
  }

  /**
   * Tries again now: from `failed` a fresh series of attempts starts; while `reconnecting` the pending delay is
   * skipped. Resolves once the connection is ready or failed again.
   */
  async reconnectNow(): Promise<void> {
    if (this.#state === 'closed')
      throw new ClosedError(`Server '${this.name}' is closed.`, { server: this.name });
    if (this.#connectOptions === undefined) {
      throw new NotConnectedError(`Server '${this.name}' was never connected; use connectServer.`, {
        server: this.name,
      });
    }
    if (this.#state === 'ready') return;
    if (this.#state === 'reconnecting') {
      this.#retry?.wake();
    } else if (this.#state !== 'connecting') {
      this.#startReconnecting(
        this.#error ?? new ConnectionLostError(`Server '${this.name}' is not connected.`),
        0,
      );
    }
    await this.#loop;
  }

  /**
   * The client to send a call with: at once when ready; after waiting (at most `timeoutMs`) while connecting or
   * reconnecting; otherwise a `NOT_CONNECTED` error carrying the last error.
   */
  async acquireClient(timeoutMs: number, signal?: AbortSignal): Promise<Client> {
    const client = this.client;
    if (client !== undefined) return client;
    if (this.#state === 'connecting' || this.#state === 'reconnecting') {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, timeoutMs);
        // One listener per caller signal however many calls wait on it (see signals.ts).
        const follow = signal === undefined ? undefined : requestSignal(signal);
        function done() {
          clearTimeout(timer);
          follow?.dispose();
          resolve();
        }
        if (follow?.signal.aborted) done();
        else follow?.signal.addEventListener('abort', done, { once: true });
        this.#waiters.add(done);
      });
      const after = this.client;
      if (after !== undefined) return after;
    }
    const last = this.#error === undefined ? '' : ` Last error: ${this.#error.message}`;
    throw new NotConnectedError(`Server '${this.name}' is not connected (state: ${this.#state}).${last}`, {
      server: this.name,
      cause: this.#error,
    });
  }

  /** True while a call may still get a client (ready now, or connecting / reconnecting). */
  get recoverable(): boolean {
    return this.#state === 'ready' || this.#state === 'connecting' || this.#state === 'reconnecting';
  }

  /** Closes the client (for stdio: ends the whole process group). Safe to call twice. */
  async close(): Promise<void> {
    const open = this.#open;
    this.#open = undefined;
    this.#setState('closed');
    this.#retry?.wake();
    await open?.client.close().catch(() => {});
    await this.#loop?.catch(() => {});
  }
}
