/**
 * One server's connection: its state, its client, what discovery found, and the last lines of its stderr.
 * The manager owns connections; apps read them through `manager.getConnection(name)`.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type Implementation,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type ServerCapabilities,
  type Tool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { ConnectionError, ConnectionLostError, RequestTimeoutError } from '../errors.js';
import type { MCPServerConfig } from './config.js';
import { type OpenClient, type OpenClientOptions, openClient } from './transport.js';

/** Lifecycle of a connection. */
export type ConnectionState = 'idle' | 'connecting' | 'ready' | 'failed' | 'closed';

/** How many stderr lines a connection keeps. */
export const STDERR_LINES_KEPT = 50;
/** Upper bound on pages followed in one `tools/list` (a server that paginates forever is cut off). */
export const MAX_LIST_PAGES = 1000;

/** Hooks the manager passes to a connection. */
export interface ConnectionHooks {
  /** The live connection ended without `close()` being called (process exit, stream failure). */
  onLost(connection: ServerConnection, error: Error): void;
  /** The server sent `notifications/tools/list_changed`. */
  onToolListChanged(connection: ServerConnection): void;
  onStderr(connection: ServerConnection, line: string): void;
}

/** One MCP server's connection. */
export class ServerConnection {
  readonly name: string;
  readonly config: MCPServerConfig;
  #state: ConnectionState = 'idle';
  #since = Date.now();
  #error: Error | undefined;
  #open: OpenClient | undefined;
  #closing = false;
  readonly #stderr: string[] = [];
  readonly #hooks: ConnectionHooks;

  /** What the server said about itself in `initialize`. */
  serverInfo: Implementation | undefined;
  serverCapabilities: ServerCapabilities | undefined;
  instructions: string | undefined;
  /** Discovery results (raw, as the server sent them). */
  tools: Tool[] = [];
  resources: Resource[] = [];
  resourceTemplates: ResourceTemplate[] = [];
  prompts: Prompt[] = [];
  /** How long the last successful connect took, discovery included. */
  connectDurationMs: number | undefined;

  constructor(config: MCPServerConfig, hooks: ConnectionHooks) {
    this.name = config.name;
    this.config = config;
    this.#hooks = hooks;
  }

  get state(): ConnectionState {
    return this.#state;
  }
  /** When the connection entered its current state (ms since the epoch). */
  get since(): number {
    return this.#since;
  }
  /** The error that failed the connection, if it failed. */
  get error(): Error | undefined {
    return this.#error;
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
    if (error !== undefined || state === 'ready') this.#error = error;
  }

  /**
   * Connects and runs discovery within `connectTimeoutMs`. Rejects with a `ConnectionError` (the state is then
   * `failed` and the error kept) and never leaves a process or socket behind on failure.
   */
  async connect(
    options: Omit<OpenClientOptions, 'signal' | 'timeoutMs' | 'onStderr'>,
    signal?: AbortSignal,
  ): Promise<void> {
    if (this.#state === 'closed')
      throw new ConnectionError(`Server '${this.name}' is closed.`, { server: this.name });
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
    this.#setState('connecting');
    this.#closing = false;
    let open: OpenClient | undefined;
    try {
      const attempt = (async () => {
        open = await openClient(this.config, {
          ...options,
          signal: controller.signal,
          timeoutMs,
          onStderr: (line) => this.#pushStderr(line),
        });
        if (this.#closing) throw new ConnectionError(`Server '${this.name}' was closed while connecting.`);
        await this.#discover(open.client, controller.signal, timeoutMs);
      })();
      attempt.catch(() => {});
      await Promise.race([attempt, deadline]);
    } catch (err) {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      controller.abort();
      const opened = open as OpenClient | undefined;
      await opened?.client.close().catch(() => {});
      const error = this.#connectError(err);
      if ((this.#state as ConnectionState) !== 'closed') this.#setState('failed', error);
      throw error;
    }
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    const ready = open as unknown as OpenClient;
    if (this.#closing) {
      // close() or disconnect() ran while discovery was in flight: honor it, leave nothing running.
      await ready.client.close().catch(() => {});
      throw new ConnectionError(`Server '${this.name}' was closed while connecting.`, { server: this.name });
    }
    this.#open = ready;
    this.connectDurationMs = performance.now() - started;
    ready.client.onclose = () => this.#handleClose(ready);
    this.#setState('ready');
  }

  #connectError(err: unknown): Error {
    const base = err instanceof Error ? err.message : String(err);
    const stderr = this.#stderr.slice(-5).join('\n');
    const detail = stderr === '' ? '' : `\nLast stderr lines:\n${stderr}`;
    if (err instanceof RequestTimeoutError)
      return new ConnectionError(`${base}${detail}`, { cause: err, server: this.name });
    const hint =
      this.config.transport === 'stdio' && /ENOENT/.test(base)
        ? ` Is '${this.config.command}' installed and on PATH?`
        : '';
    return new ConnectionError(`Server '${this.name}' failed to connect: ${base}.${hint}${detail}`, {
      cause: err,
      server: this.name,
    });
  }

  async #discover(client: Client, signal: AbortSignal, timeoutMs: number): Promise<void> {
    this.serverInfo = client.getServerVersion();
    this.serverCapabilities = client.getServerCapabilities();
    this.instructions = client.getInstructions();
    const caps = this.serverCapabilities ?? {};
    const opts = { signal, timeout: timeoutMs };
    if (caps.tools !== undefined) {
      this.tools = await this.listAllTools(client, opts);
      client.setNotificationHandler(ToolListChangedNotificationSchema, () =>
        this.#hooks.onToolListChanged(this),
      );
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

  /** Lists every tool, following `nextCursor`. */
  listAllTools(client: Client, options: { signal?: AbortSignal; timeout?: number }): Promise<Tool[]> {
    return paginate(
      (cursor) => client.listTools({ cursor }, options),
      (r) => r.tools,
    );
  }

  #pushStderr(line: string): void {
    this.#stderr.push(line.length > 2000 ? `${line.slice(0, 2000)}…` : line);
    if (this.#stderr.length > STDERR_LINES_KEPT) this.#stderr.shift();
    this.#hooks.onStderr(this, line);
  }

  #handleClose(open: OpenClient): void {
    if (this.#open !== open) return;
    this.#open = undefined;
    if (this.#closing || this.#state === 'closed') return;
    const stderr = this.#stderr.slice(-5).join('\n');
    const error = new ConnectionLostError(
      `Connection to server '${this.name}' was lost${stderr === '' ? '.' : `; last stderr lines:\n${stderr}`}`,
      { server: this.name },
    );
    this.#setState('failed', error);
    this.#hooks.onLost(this, error);
  }

  /** Closes the client (for stdio: ends the process). Safe to call twice. */
  async close(): Promise<void> {
    this.#closing = true;
    const open = this.#open;
    this.#open = undefined;
    this.#setState('closed');
    await open?.client.close().catch(() => {});
  }

  /** Closes the live client but keeps the connection reusable (for `disconnectServer` then reconnect). */
  async disconnect(): Promise<void> {
    this.#closing = true;
    const open = this.#open;
    this.#open = undefined;
    await open?.client.close().catch(() => {});
    this.#setState('idle');
  }
}

async function paginate<R extends { nextCursor?: string | undefined }, T>(
  fetchPage: (cursor: string | undefined) => Promise<R>,
  items: (page: R) => T[],
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  const seen = new Set<string>();
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const result = await fetchPage(cursor);
    out.push(...items(result));
    cursor = result.nextCursor;
    // A cursor seen before would loop forever: stop there.
    if (cursor === undefined || cursor === '' || seen.has(cursor)) return out;
    seen.add(cursor);
  }
  return out;
}
