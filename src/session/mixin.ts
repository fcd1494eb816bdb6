/**
 * `SessionInteropMixin(Base)` adds MCP to any session class (issue 4, "Session mixin"): the session connects
 * its servers when it starts and always disconnects them when it closes, also when its work failed, so no
 * server process outlives it. Connect and disconnect are idempotent and safe under concurrent calls: they run
 * one after another, and a call made while the same operation is under way shares its result.
 */

import { type LoadMCPConfigOptions, loadMCPConfig } from '../config/mcp-json.js';
import type { MCPServerConfigInput } from '../config/servers.js';
import { ClosedError } from '../errors.js';
import { MCPClientManager, type MCPClientManagerOptions } from '../interop/manager.js';
import { isJsonObject } from '../json.js';
import type { CapabilitySet } from '../security/capability-set.js';
import { FlowState } from '../security/flow.js';
import type { ToolWrapper } from '../tools/tool-wrapper.js';
import { FlowBoundTools, GatedToolView, type McpToolAccess } from './gated-view.js';

/** The interop options of a mixed session, read from the `interop` field of its first constructor argument. */
export interface SessionInteropOptions {
  /** The servers `connectInterop()` connects: configs, or the path of an `mcp.json`-style file. @default none */
  mcpServers?: readonly MCPServerConfigInput[] | string | undefined;
  /** Variables for `${VAR}` expansion when `mcpServers` is a path. @default process.env */
  loadOptions?: LoadMCPConfigOptions | undefined;
  /**
   * A manager to share (a parent's). The session then connects and disconnects only its own `mcpServers` on
   * it, and never closes it. @default a new manager the session owns and closes
   */
  manager?: MCPClientManager | undefined;
  /** Options of the manager the session creates. @default {} */
  managerOptions?: MCPClientManagerOptions | undefined;
  /** Creates the manager (engines bind this). @default `(o) => new MCPClientManager(o)` */
  createManager?: ((options: MCPClientManagerOptions) => MCPClientManager) | undefined;
  /**
   * The session's own set. When it is not the manager's (a shared manager), every call through `tools` is
   * checked against it first, with the manager options' approver, audit and agent. @default the manager's
   */
  capabilities?: CapabilitySet | undefined;
  /**
   * The session's flow state (issue 42): every call through `tools` is decided in it and records into it. Pass a
   * parent's `flow.derive()` for a sub-agent. @default the manager's own `flow` when the session owns its manager;
   * a new state (with the manager's options) when the manager is shared, so no other session's reads reach it
   */
  flow?: FlowState | undefined;
  /** Connect when the session starts. @default true */
  autoConnect?: boolean | undefined;
}

/** What the mixin adds to a session class. */
export interface SessionInterop extends AsyncDisposable {
  /** The session's manager. */
  readonly mcp: MCPClientManager;
  /** True between a finished `connectInterop()` and the next `disconnectInterop()`. */
  readonly mcpConnected: boolean;
  /** The MCP tools; their calls go through the session's capability set, in the session's flow state. */
  readonly tools: ToolWrapper[];
  /** What has entered the session, with which labels (issue 42); read by flow conditions. */
  readonly flow: FlowState;
  /** Connects the session's servers in parallel; resolves to which of them connected. Idempotent. */
  connectInterop(): Promise<Record<string, boolean>>;
  /** Disconnects the servers the session connected. Idempotent. */
  disconnectInterop(): Promise<void>;
  /** Connects (when `autoConnect`), then runs the base class's `start()`, if it has one. */
  start(...args: unknown[]): Promise<void>;
  /** Runs the base class's `close()`, if any, then always disconnects (and closes an owned manager). */
  close(...args: unknown[]): Promise<void>;
}

/** A class a session can be mixed into. */
// biome-ignore lint/suspicious/noExplicitAny: TypeScript requires `any[]` for mixin constructors (TS2545).
export type SessionConstructor<T = object> = new (...args: any[]) => T;

/**
 * One session's interop state. Kept in a WeakMap rather than `#fields`: a class expression cannot export those.
 * Internal to the session area (not in its index).
 */
export class InteropState {
  readonly manager: MCPClientManager;
  readonly owned: boolean;
  readonly access: McpToolAccess;
  readonly flow: FlowState;
  readonly autoConnect: boolean;
  readonly #servers: SessionInteropOptions['mcpServers'];
  readonly #loadOptions: LoadMCPConfigOptions | undefined;
  connected = false;
  closed = false;
  #status: Record<string, boolean> = {};
  #names: string[] = [];
  #tail: Promise<unknown> = Promise.resolve();
  #connecting: Promise<Record<string, boolean>> | undefined;
  #disconnecting: Promise<void> | undefined;
  #shutdown: Promise<void> | undefined;

  constructor(options: SessionInteropOptions) {
    this.owned = options.manager === undefined;
    const managerOptions = options.managerOptions ?? {};
    this.manager =
      options.manager ?? (options.createManager ?? ((o) => new MCPClientManager(o)))({ ...managerOptions });
    this.autoConnect = options.autoConnect ?? true;
    this.#servers = options.mcpServers;
    this.#loadOptions = options.loadOptions;
    const own = this.manager.flow;
    this.flow =
      options.flow ??
      (this.owned
        ? own
        : new FlowState({ minFragmentLength: own.minFragmentLength, maxIndexedChars: own.maxIndexedChars }));
    const set = options.capabilities;
    if (set !== undefined && set !== this.manager.capabilities) {
      this.access = new GatedToolView(this.manager, {
        capabilities: set,
        approver: managerOptions.approver,
        audit: managerOptions.audit,
        auditFailure: managerOptions.auditFailure,
        agent: managerOptions.agent,
        flow: this.flow,
      });
    } else {
      // The manager's own gate; its own flow state only when it is the session's.
      this.access = this.flow === own ? this.manager : new FlowBoundTools(this.manager, this.flow);
    }
  }

  /** Runs `op` after every operation queued before it, settled or not. */
  #enqueue<T>(op: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(op, op);
    this.#tail = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  connect(): Promise<Record<string, boolean>> {
    if (this.closed) return Promise.reject(closedError());
    this.#disconnecting = undefined; // a disconnect queued before this connect must not be shared after it
    const pending = this.#connecting;
    if (pending !== undefined) return pending;
    const run = this.#enqueue(() => this.#connect()).finally(() => {
      if (this.#connecting === run) this.#connecting = undefined;
    });
    this.#connecting = run;
    return run;
  }

  async #connect(): Promise<Record<string, boolean>> {
    if (this.closed) throw closedError();
    if (this.connected) return { ...this.#status };
    const servers = this.#servers;
    const configs =
      typeof servers === 'string' ? await loadMCPConfig(servers, this.#loadOptions) : [...(servers ?? [])];
    const status = configs.length === 0 ? {} : await this.manager.connectAll(configs);
    this.#names = Object.keys(status);
    this.#status = status;
    this.connected = true;
    return { ...status };
  }

  disconnect(): Promise<void> {
    this.#connecting = undefined; // a connect queued before this disconnect must not be shared after it
    const pending = this.#disconnecting;
    if (pending !== undefined) return pending;
    const run = this.#enqueue(() => this.#disconnect()).finally(() => {
      if (this.#disconnecting === run) this.#disconnecting = undefined;
    });
    this.#disconnecting = run;
    return run;
  }

  async #disconnect(): Promise<void> {
    const names = this.#names;
    this.#names = [];
    this.#status = {};
    this.connected = false;
    if (this.owned) await this.manager.disconnectAll();
    else await Promise.allSettled(names.map((name) => this.manager.disconnectServer(name)));
  }

  /** Disconnects for good, then closes an owned manager. */
  shutdown(): Promise<void> {
    this.#shutdown ??= (async () => {
      try {
        await this.disconnect();
      } finally {
        this.closed = true;
        if (this.owned) await this.manager.close();
      }
    })();
    return this.#shutdown;
  }
}

const states = new WeakMap<object, InteropState>();

/** The interop state of a mixed session. Internal to the session area. */
export function interopState(session: object): InteropState {
  const state = states.get(session);
  if (state === undefined) {
    throw new TypeError(
      'Not a session built with SessionInteropMixin (or its constructor has not finished).',
    );
  }
  return state;
}

function closedError(): ClosedError {
  return new ClosedError(
    'This session is closed; its MCP servers cannot be connected again. Create a new session.',
  );
}

type Lifecycle = { start?: (...args: unknown[]) => unknown; close?: (...args: unknown[]) => unknown };

/**
 * Adds MCP to a session class. The mixed class reads {@link SessionInteropOptions} from the `interop` field of
 * its first constructor argument and passes every argument on to `Base` unchanged. It wraps `Base`'s
 * `start()` and `close()` when they exist (and adds them when they do not): start connects first; close runs
 * `Base`'s close and then, in a `finally`, disconnects.
 *
 * ```ts
 * class ChatSession { constructor(readonly options: { interop?: SessionInteropOptions }) {} }
 * const McpChatSession = SessionInteropMixin(ChatSession);
 * await using session = new McpChatSession({ interop: { mcpServers: './mcp.json' } });
 * await session.start();
 * ```
 */
export function SessionInteropMixin<TBase extends SessionConstructor>(
  Base: TBase,
): TBase & SessionConstructor<SessionInterop> {
  const base = Base.prototype as Lifecycle;
  class InteropSession extends Base implements SessionInterop {
    // biome-ignore lint/suspicious/noExplicitAny: mixin constructors must take `any[]` (TS2545).
    constructor(...args: any[]) {
      super(...args);
      const first: unknown = args[0];
      const options =
        isJsonObject(first) && isJsonObject(first.interop) ? (first.interop as SessionInteropOptions) : {};
      states.set(this, new InteropState(options));
    }

    get mcp(): MCPClientManager {
      return interopState(this).manager;
    }

    get mcpConnected(): boolean {
      return interopState(this).connected;
    }

    get tools(): ToolWrapper[] {
      return interopState(this).access.tools;
    }

    get flow(): FlowState {
      return interopState(this).flow;
    }

    connectInterop(): Promise<Record<string, boolean>> {
      return interopState(this).connect();
    }

    disconnectInterop(): Promise<void> {
      return interopState(this).disconnect();
    }

    async start(...args: unknown[]): Promise<void> {
      const state = interopState(this);
      if (state.autoConnect) await state.connect();
      try {
        await base.start?.apply(this, args);
      } catch (err) {
        await state.disconnect();
        throw err;
      }
    }

    async close(...args: unknown[]): Promise<void> {
      try {
        await base.close?.apply(this, args);
      } finally {
        await interopState(this).shutdown();
      }
    }

    async [Symbol.asyncDispose](): Promise<void> {
      await this.close();
    }
  }
  return InteropSession;
}
