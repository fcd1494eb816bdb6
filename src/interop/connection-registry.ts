/**
 * The manager's connections: one {@link ServerConnection} per server name, connected in parallel, each bounded by
 * its own connect timeout, reconnected by the connection itself, closed with `Promise.allSettled`. It knows
 * nothing of tools: what a server lists is handed to the manager through {@link ConnectionRegistryDeps}.
 */
import { setMaxListeners } from 'node:events';
import type { FetchLike } from '@modelcontextprotocol/client';
import { serverHttpOverrides } from '../config/http.js';
import type { MCPServerConfig } from '../config/servers.js';
import { ConfigError, ConnectionError, InterlockError, NotConnectedError } from '../errors.js';
import { lazyModule } from '../lazy.js';
import type { HttpClient } from '../net/http.js';
import type { Tracer } from '../otel.js';
import type { ClientIdentity } from '../protocol/transport.js';
import { prepareValidationSoon } from '../tools/validate.js';
import type { ConnectionState, ServerConnection } from './connection.js';
import type { MCPManagerEvents, TypedEvents } from './events.js';
import type { Logger } from './logger.js';
import type { ServerAuthFactory } from './open-client.js';
import type { ServerLogSupport } from './server-logs.js';
import type { ServerRequestSupport } from './server-requests.js';
import type { CallHealth } from './stats.js';

// Issue 15, import time: the connection stack (connections, transports, SDK error mapping, task handles) loads
// with the first manager, not with `mcp-interlock/interop`.
const connectionStack = lazyModule(() => import('./connection.js'));

/** One server's health, from `manager.health()`: its connection, and its calls as {@link CallHealth}. */
export interface ServerHealth extends CallHealth {
  state: ConnectionState;
  transport: ServerConnection['transport'];
  /** The protocol revision agreed with the server, e.g. `2026-07-28` or `2025-11-25`; undefined before connect. */
  protocolVersion: string | undefined;
  /** When the server entered its current state (ISO 8601). */
  since: string;
  reconnects: number;
  lastError: { code: string | undefined; message: string } | undefined;
  /** Calls waiting for one of the server's slots (`maxConcurrentCalls`). */
  callsQueued: number;
}

/** What a {@link ConnectionRegistry} connects with, and whom it tells about tools. */
export interface ConnectionRegistryDeps {
  http: HttpClient;
  identity: ClientIdentity;
  tracer: Tracer;
  serverAuth: ServerAuthFactory | undefined;
  serverRequests: ServerRequestSupport | undefined;
  serverLogs: ServerLogSupport;
  logger: Logger;
  events: TypedEvents<MCPManagerEvents>;
  /** A server connected: take its tools (quietly). Returns how many it exposes; throws when they cannot be used. */
  onConnected(connection: ServerConnection): number;
  /** A server reconnected and listed its tools again. Returns how many it exposes. */
  onReconnected(connection: ServerConnection): number;
  /** The server said its tool list changed. */
  onToolListChanged(server: string): void;
  /** A server connected but its tools could not be used: forget any of them (quietly). */
  onDiscarded(server: string): void;
}

/** The connections of one manager, by server name. */
export class ConnectionRegistry {
  readonly #deps: ConnectionRegistryDeps;
  readonly #connections = new Map<string, ServerConnection>();
  readonly #pending = new Map<string, Promise<ServerConnection>>();
  /** Aborts connects still in flight when the manager closes, so close() never waits out a connect timeout. */
  readonly #closeController = new AbortController();

  constructor(deps: ConnectionRegistryDeps) {
    this.#deps = deps;
    // Nothing connects before the connection stack is loaded; start loading it now, in the background.
    connectionStack.preload();
    // Every connect in flight listens on this signal: connectAll of more than 10 servers is no leak.
    setMaxListeners(0, this.#closeController.signal);
  }

  /** The connection of `name`, whatever its state. */
  get(name: string): ServerConnection | undefined {
    return this.#connections.get(name);
  }

  /** Every connection, whatever its state, in connect order. */
  values(): ServerConnection[] {
    return [...this.#connections.values()];
  }

  /** Whether `connection` is still the one registered under its name. */
  isCurrent(connection: ServerConnection): boolean {
    return this.#connections.get(connection.name) === connection;
  }

  /** Throws `INVALID_CONFIG` when a server of that name is connected or connecting. */
  assertNameFree(name: string): void {
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

  /** Connects every enabled server in parallel; true for each that is ready (with its tools). */
  async connectAll(configs: readonly MCPServerConfig[]): Promise<Record<string, boolean>> {
    for (const config of configs) this.assertNameFree(config.name);
    const results = await Promise.allSettled(
      configs.map((config) => (config.enabled ? this.connect(config) : Promise.resolve(undefined))),
    );
    const out: Record<string, boolean> = {};
    configs.forEach((config, i) => {
      out[config.name] = results[i]?.status === 'fulfilled' && results[i].value !== undefined;
    });
    return out;
  }

  /** Connects one server; rejects with a coded error when it fails (the connection keeps it). */
  connect(config: MCPServerConfig): Promise<ServerConnection> {
    const stack = connectionStack.loaded;
    if (stack === undefined) return this.#connectOnceLoaded(config);
    const { events, logger } = this.#deps;
    this.#registerSecrets(config);
    const connection = new stack.ServerConnection(config, {
      onLost: (conn, error) => {
        logger.warn(`server '${conn.name}' connection lost: ${error.message}`, { server: conn.name });
        events.emit('disconnected', { server: conn.name, reason: 'lost', error });
      },
      onReconnecting: (conn, attempt, delayMs, error) => {
        logger.info(`reconnecting '${conn.name}' (attempt ${attempt}) in ${delayMs} ms`, {
          server: conn.name,
        });
        events.emit('reconnecting', { server: conn.name, attempt, delayMs, error });
      },
      onReconnected: (conn, attempt) => {
        // Tools are listed again on every reconnect, and pins re-checked; wrappers handed out stay valid.
        const tools = this.#deps.onReconnected(conn);
        events.emit('reconnected', { server: conn.name, attempt, tools });
      },
      onFailed: (conn, error) => {
        logger.warn(`server '${conn.name}' failed: ${error.message}`, { server: conn.name });
        events.emit('failed', { server: conn.name, error });
      },
      onToolListChanged: (conn) => this.#deps.onToolListChanged(conn.name),
      onWarning: (conn, code, message) => {
        logger.warn(message, { server: conn.name });
        events.emit('warning', { server: conn.name, code, message });
      },
      onStderr: (conn, line) => logger.debug(`[${conn.name} stderr] ${line}`, { server: conn.name }),
    });
    this.#connections.set(config.name, connection);
    const started = performance.now();
    events.emit('connecting', { server: config.name, transport: config.transport });
    const promise = connection
      .connect(
        {
          identity: this.#deps.identity,
          fetch: this.#deps.http.fetch,
          resolveFetch: this.#resolveFetch(config),
          tracer: this.#deps.tracer,
          serverAuth: this.#deps.serverAuth,
          serverRequests: this.#deps.serverRequests,
          serverLogs: this.#deps.serverLogs,
          redactor: this.#deps.http.redactor,
        },
        this.#closeController.signal,
      )
      .then(async () => {
        let tools: number;
        try {
          tools = this.#deps.onConnected(connection);
        } catch (err) {
          // Either connected with its tools, or failed and closed: never ready with a live process and no tools.
          await connection.close().catch(() => {});
          this.#deps.onDiscarded(config.name);
          throw new ConnectionError(
            `Server '${config.name}' connected, but its tool list cannot be used (${(err as Error).message.replace(/\.$/, '')}; a tool schema nested too deeply does this). The server was closed.`,
            { server: config.name, cause: err },
          );
        }
        events.emit('connected', {
          server: config.name,
          transport: connection.transport,
          durationMs: performance.now() - started,
          tools,
        });
        return connection;
      })
      .catch((error: Error) => {
        logger.warn(error.message, { server: config.name });
        events.emit('connection_failed', {
          server: config.name,
          error,
          durationMs: performance.now() - started,
        });
        throw error;
      })
      .finally(() => this.#pending.delete(config.name));
    this.#pending.set(config.name, promise);
    // The server is starting (a process spawned, a request on its way): the one-time part of argument checking
    // runs in that wait, not in the first tool call.
    prepareValidationSoon();
    return promise;
  }

  /**
   * The first connect of a process that has not loaded the connection stack yet: the name is taken at once (a
   * second connect of it fails as ever), and the connect starts when the stack is loaded.
   */
  #connectOnceLoaded(config: MCPServerConfig): Promise<ServerConnection> {
    const promise = connectionStack.load().then(() => {
      this.#pending.delete(config.name);
      this.#closeController.signal.throwIfAborted();
      return this.connect(config);
    });
    this.#pending.set(config.name, promise);
    promise.catch(() => {
      if (this.#pending.get(config.name) === promise) this.#pending.delete(config.name);
    });
    return promise;
  }

  /** What a server config holds that a server may echo back: secret-named headers and env values, URL passwords. */
  #registerSecrets(config: MCPServerConfig): void {
    const redactor = this.#deps.http.redactor;
    if (config.transport === 'stdio') {
      redactor.addNamed(config.env);
      return;
    }
    redactor.addNamed(config.headers);
    const password = URL.canParse(config.url) ? new URL(config.url).password : '';
    if (password !== '') redactor.add(decodeURIComponent(password));
  }

  /**
   * The fetch of each connect attempt of a server with its own `tls` / `proxy`: its certificate files are read
   * again for every attempt, so a reconnect picks up rotated ones; a file that cannot be read fails that attempt
   * of that server alone with `INVALID_CONFIG`. Undefined for other servers (they use the shared fetch).
   */
  #resolveFetch(config: MCPServerConfig): (() => Promise<FetchLike>) | undefined {
    if (config.transport === 'stdio' || (config.tls === undefined && config.proxy === undefined))
      return undefined;
    const http = this.#deps.http;
    return async () => http.fetchFor(await serverHttpOverrides(config));
  }

  /** Takes `name` out of the registry (its tools are the caller's to remove); undefined when unknown. */
  remove(name: string): ServerConnection | undefined {
    const connection = this.#connections.get(name);
    if (connection !== undefined) this.#connections.delete(name);
    return connection;
  }

  /** Aborts every connect in flight and waits until each has settled. */
  async abortConnects(reason: Error): Promise<void> {
    this.#closeController.abort(reason);
    await Promise.allSettled([...this.#pending.values()]);
  }

  /** Tries to reconnect `name` now; true when it is ready again. */
  async reconnect(name: string): Promise<boolean> {
    const connection = this.#connections.get(name);
    if (connection === undefined) {
      throw new NotConnectedError(`No server named '${name}'; connect it with connectServer first.`, {
        server: name,
      });
    }
    await connection.reconnectNow();
    return connection.state === 'ready';
  }

  /** The ready connection of `server`, or NOT_CONNECTED at once (for refreshes, which never wait). */
  live(server: string): ServerConnection {
    const connection = this.#connections.get(server);
    if (connection?.client !== undefined) return connection;
    const last = connection?.error === undefined ? '' : ` Last error: ${connection.error.message}`;
    throw new NotConnectedError(
      `Server '${server}' is not connected (state: ${connection?.state ?? 'unknown'}).${last}`,
      { server, cause: connection?.error },
    );
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
            : { code: error instanceof InterlockError ? error.code : undefined, message: error.message },
        callsQueued: connection.limiter.queued,
        ...connection.stats.health(),
      };
    }
    return out;
  }
}
